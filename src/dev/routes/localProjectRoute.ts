import { PlatformError } from "../../core/errors.ts";
import { readJsonObject } from "../../core/web/jsonBody.ts";
import { findProjectBySlug, setProjectPrivate } from "../../workers/db/projectsTable.ts";
import { insertOwnedProject, requireOwnedProject } from "../../workers/api/projectRoutes.ts";
import { maxProjectsPerAccount } from "../../workers/api/projectsPerAccount.ts";
import { validateSlug } from "../../workers/api/projectSlug.ts";
import { PLATFORM_ROUTE_SLUGS, refuseReservedSlug } from "../../workers/api/reservedSlugs.ts";
import type { CliRequest } from "../../workers/api/withCliUser.ts";
import type { DevApiEnv } from "./devApiEnv.ts";

/**
 * `PUT /projects/:slug/local` `{ private }` (CLI token, project ownership;
 * `platform dev` only): creates the local project on first use, applies
 * `--private` (or its absence), which the deployed API has no route for, and
 * answers what the CLI binds into the local project worker, its worker secret
 * included. The secret already sits in the developer's local D1 file; a
 * deployed API never answers this route.
 *
 * The slug comes from the project's folder or package name, so only the
 * platform's own route names are refused here: a folder named `support`
 * still runs locally, and `POST /projects` names the reserved-slug rule when
 * it is first deployed. A local platform has no other tenant to impersonate.
 */
export async function linkLocalProject(request: CliRequest, env: DevApiEnv): Promise<Response> {
  const body = await readJsonObject(request, 1024);
  if (typeof body.private !== "boolean") throw new PlatformError("invalid_input", "private must be true or false.");
  const { slug } = await ownedOrNewProject(request, env, body.private);
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

async function ownedOrNewProject(request: CliRequest, env: DevApiEnv, isPrivate: boolean): Promise<{ slug: string }> {
  const slug = request.params.slug!;
  if (await findProjectBySlug(env.DB, slug)) return requireOwnedProject(env.DB, request.user, slug);
  validateSlug(slug);
  refuseReservedSlug(slug, PLATFORM_ROUTE_SLUGS);
  return insertOwnedProject(env.DB, request.user, slug, isPrivate, maxProjectsPerAccount(env));
}
