import { PlatformError } from "../../core/errors.ts";
import { readJsonObject } from "../../core/web/jsonBody.ts";
import { findProjectBySlug, type ProjectRow } from "../../workers/db/projectsTable.ts";
import { insertOwnedProject, requireOwnedProject } from "../../workers/api/projectRoutes.ts";
import { maxProjectsPerAccount } from "../../workers/api/projectsPerAccount.ts";
import type { CliRequest } from "../../workers/api/withCliUser.ts";
import type { DevApiEnv } from "./devApiEnv.ts";

/**
 * `PUT /projects/:slug/local` `{ private }` (CLI token, project ownership;
 * `platform dev` only, never mounted by the deployed API or `platform up`):
 * creates the local project on first use, private or not, and answers what
 * the CLI binds into the local project worker, its worker secret included.
 * The secret already sits in the developer's local D1 file.
 *
 * It creates projects as `POST /projects` does (`insertOwnedProject`: the
 * same slug rules, reserved names included; `platform dev` runs a folder
 * named like a reserved slug as `app-<name>`, see projectSlugFor.ts), and
 * like every route it never changes whether a project is private: asking for
 * the other one answers 409.
 */
export async function linkLocalProject(request: CliRequest, env: DevApiEnv): Promise<Response> {
  const body = await readJsonObject(request, 1024);
  if (typeof body.private !== "boolean") throw new PlatformError("invalid_input", "private must be true or false.");
  const slug = request.params.slug!;
  const existing = await findProjectBySlug(env.DB, slug);
  const row = existing
    ? await requireOwnedProject(env.DB, request.user, slug)
    : await insertOwnedProject(
        env.DB,
        { user: request.user, slug, isPrivate: body.private },
        maxProjectsPerAccount(env),
      );
  if ((row.private === 1) !== body.private) throw privacyIsFixed(row);
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

function privacyIsFixed(row: ProjectRow): PlatformError {
  const is = row.private === 1 ? "private" : "public";
  return new PlatformError(
    "conflict",
    `Project "${row.slug}" was created ${is}, and whether a project is private is fixed when it is created.`,
  );
}
