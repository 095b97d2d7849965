import { readJsonObject } from "../../core/web/jsonBody.ts";
import { requireProjectLog, sourceMapOf } from "../../workers/api/projectLogs/projectLogRoutes.ts";
import { requireOwnedProject } from "../../workers/api/projectRoutes.ts";
import type { CliRequest } from "../../workers/api/withCliUser.ts";
import type { DevApiEnv } from "./devApiEnv.ts";

/** A dev build's map, its sources named relative to the project: well under this. */
const MAP_LIMIT_BYTES = 16 * 1024 * 1024;

/**
 * `PUT /projects/:slug/source-map` `{ map }` (`platform dev` only): the map
 * of the build `platform dev` serves now, after each rebuild, as `platform
 * push` sends its bundle's with the deployment. The project's log and its
 * runs' failed steps then name `src/index.ts:12:11`. A deployed API has no
 * such route: a deployment's map arrives with its bundle, never apart.
 */
export async function putLocalSourceMap(request: CliRequest, env: DevApiEnv): Promise<Response> {
  const project = await requireOwnedProject(env.DB, request.user, request.params.slug!);
  const body = await readJsonObject(request, MAP_LIMIT_BYTES);
  const map = sourceMapOf(body.map);
  await requireProjectLog(env, project.id).setSourceMap(map);
  return Response.json({ ok: true }, { headers: { "Cache-Control": "no-store" } });
}
