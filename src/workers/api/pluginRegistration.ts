import { PLUGINS, type PluginId } from "../../contracts/pluginRegistry.ts";
import { IDENTITY_HEADER, signRequestToken } from "../../core/requestToken.ts";
import type { ProjectRow } from "../db/projectsTable.ts";
import type { ApiEnv } from "./env.ts";

export type PluginRegistration = Partial<Record<PluginId, "registered" | "not bound" | string>>;

/**
 * After a deploy, hands the project's plugin handlers (metadata `plugins`) to
 * `POST /deploy` of each plugin whose descriptor asks for them (through the
 * binding it names), as the project itself would: with an identity
 * token signed by its worker secret, which only the API worker holds. The
 * chat-server plugin then registers the project's commands on every server
 * it claimed. A plugin that refuses is reported, not fatal: the bundle is
 * already live.
 */
export async function registerWithPlugins(
  env: ApiEnv,
  project: ProjectRow,
  metadata: Record<string, unknown>,
): Promise<PluginRegistration> {
  const body = JSON.stringify({ plugins: (metadata.plugins as Record<string, unknown> | undefined) ?? {} });
  const entries = await Promise.all(
    PLUGINS.filter((plugin) => plugin.deploy).map(async ({ id: pluginId, binding }) => {
      const plugin = env[binding];
      if (!plugin) return [pluginId, "not bound"] as const;
      const token = await signRequestToken("identity", project.id, project.worker_secret, {
        method: "POST",
        pathAndQuery: "/deploy",
        body,
      });
      try {
        const response = await plugin.fetch("https://plugin.internal/deploy", {
          method: "POST",
          headers: { "content-type": "application/json", [IDENTITY_HEADER]: token },
          body,
        });
        if (response.ok) return [pluginId, "registered"] as const;
        return [pluginId, `refused (${response.status}): ${(await response.text()).slice(0, 200)}`] as const;
      } catch (error) {
        return [pluginId, `unreachable: ${String(error)}`] as const;
      }
    }),
  );
  return Object.fromEntries(entries) as PluginRegistration;
}
