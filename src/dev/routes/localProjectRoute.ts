import { PlatformError } from "../../core/errors.ts";
import { readJsonObject } from "../../core/web/jsonBody.ts";
import { findProjectBySlug, setProjectPrivate } from "../../platform/db/projectsTable.ts";
import { requireOwnedProject } from "../../platform/api/projectRoutes.ts";
import type { CliRequest } from "../../platform/api/withCliUser.ts";
import type { DevApiEnv } from "./devApiEnv.ts";

/**
 * `PUT /projects/:slug/local` `{ private }` (CLI token, project ownership;
 * `platform dev` only): applies `--private` (or its absence), which the
 * deployed API has no route for, and answers what the CLI binds into the
 * local project worker, its worker secret included. The secret already sits
 * in the developer's local D1 file; a deployed API never answers this route.
 */
export async function linkLocalProject(request: CliRequest, env: DevApiEnv): Promise<Response> {
  const { slug } = await requireOwnedProject(env.DB, request.user, request.params.slug!);
  const body = await readJsonObject(request, 1024);
  if (typeof body.private !== "boolean") throw new PlatformError("invalid_input", "private must be true or false.");
  await setProjectPrivate(env.DB, slug, body.private);
  const row = (await findProjectBySlug(env.DB, slug))!;
  return Response.json(
    {
      project: {
        id: row.id,
        slug: row.slug,
        scriptName: row.script_name,
        workerSecret: row.worker_secret,
        private: row.private === 1,
      },
    },
    { headers: { "Cache-Control": "no-store" } },
  );
}
