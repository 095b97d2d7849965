import { listConnectionSummaries } from "../db/connectionsStore.ts";
import { listProjectResources, toResourceSummary } from "../db/resourceClaims.ts";
import type { ApiEnv } from "./env.ts";
import { requireOwnedProject } from "./projectRoutes.ts";
import type { CliRequest } from "./withCliUser.ts";

/**
 * `GET /projects/:slug/plugins`: the project's plugin connections (plugin,
 * provider user, connected at, token expiry, health: `active`,
 * `needs_reconnect` with the provider's last error and time, or `revoked`;
 * never a token) and claimed resources (with the commands registered in a
 * chat server). The CLI polls it during an install; `platform plugin status`
 * and the console show it.
 */
export async function listProjectPlugins(request: CliRequest, env: ApiEnv): Promise<Response> {
  const project = await requireOwnedProject(env.DB, request.user, request.params.slug!);
  const [connections, resources] = await Promise.all([
    listConnectionSummaries(env.DB, project.id),
    listProjectResources(env.DB, project.id),
  ]);
  return Response.json(
    { connections, resources: resources.map(toResourceSummary) },
    { headers: { "Cache-Control": "no-store" } },
  );
}
