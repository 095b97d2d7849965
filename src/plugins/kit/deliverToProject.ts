import { callProjectWorker } from "../../workers/dispatch/callProjectWorker.ts";
import { resolveDispatcher } from "../../workers/dispatch/dispatcher.ts";
import type { ProjectRow } from "../../workers/db/projectsTable.ts";
import type { PluginEnv } from "./pluginEnv.ts";
import type { PluginDelivery } from "../../contracts/pluginDelivery.ts";

/**
 * Delivers an event or command to a project's `/__plugin/<pluginId>` through
 * the dispatcher, signed with the project's `internal` token. Returns the
 * project worker's response as is (502 JSON when the worker is not deployed).
 */
export function deliverToProject(
  env: PluginEnv,
  project: Pick<ProjectRow, "id" | "slug" | "script_name" | "worker_secret">,
  pluginId: string,
  payload: PluginDelivery,
): Promise<Response> {
  return callProjectWorker(resolveDispatcher(env), project, {
    method: "POST",
    pathAndQuery: `/__plugin/${pluginId}`,
    body: JSON.stringify(payload),
  });
}
