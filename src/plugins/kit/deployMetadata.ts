import { parseJsonObject } from "../../core/web/jsonBody.ts";
import type { ProjectRow } from "../../workers/db/projectsTable.ts";
import { authenticateProjectCall } from "./authenticateProjectCall.ts";
import type { PluginEnv } from "./pluginEnv.ts";

/**
 * `POST /deploy` (identity token), sent by `platform push` / `platform dev`:
 * the project's metadata for this plugin, either the plugin's own object or
 * the whole build metadata `{ plugins: { <pluginId>: { … } } }`.
 */
export async function readDeployMetadata(
  request: Request,
  env: Pick<PluginEnv, "DB">,
  pluginId: string,
): Promise<{ project: ProjectRow; metadata: Record<string, unknown> }> {
  const { project, body } = await authenticateProjectCall(request, env.DB);
  const input = parseJsonObject(body);
  const plugins = input.plugins as Record<string, unknown> | undefined;
  const metadata = (plugins && typeof plugins === "object" ? (plugins[pluginId] ?? {}) : input) as Record<
    string,
    unknown
  >;
  return { project, metadata };
}
