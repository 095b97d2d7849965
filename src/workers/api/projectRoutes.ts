import { projectSchedules } from "../../contracts/workflowSchedules.ts";
import { randomHex } from "../../core/crypto/encoding.ts";
import { PlatformError } from "../../core/errors.ts";
import { readJsonObject } from "../../core/web/jsonBody.ts";
import { replaceProjectAuthStatements } from "../db/projectAuthTable.ts";
import { listProjectCrons, replaceProjectCronsStatements } from "../db/projectCronsTable.ts";
import {
  countProjectsOwnedBy,
  findProjectBySlug,
  insertProject,
  listProjectsOwnedBy,
  toPublicProject,
  type ProjectRow,
} from "../db/projectsTable.ts";
import { listProjectWorkflows, replaceProjectWorkflowsStatements } from "../db/projectWorkflowsTable.ts";
import { replaceProjectWebhooksStatements } from "../db/projectWebhooksTable.ts";
import type { CliUser } from "./cliTokens.ts";
import type { ApiEnv } from "./env.ts";
import { scriptNameFor, validateSlug } from "./projectSlug.ts";
import { maxProjectsPerAccount, projectCapError } from "./projectsPerAccount.ts";
import { refuseReservedSlug } from "./reservedSlugs.ts";
import { validateMetadataAuth } from "./projectAuthSettings.ts";
import { validateMetadataCrons } from "./projectCrons.ts";
import { validateMetadataWorkflows } from "./projectWorkflows.ts";
import { validateMetadataWebhooks } from "./projectWebhooks.ts";
import type { CliRequest } from "./withCliUser.ts";

/** Another user's project answers exactly like a missing one, so slugs do not leak ownership. */
export async function requireOwnedProject(db: D1Database, user: CliUser, slug: string): Promise<ProjectRow> {
  const row = await findProjectBySlug(db, slug);
  if (!row || row.owner_id !== user.id)
    throw new PlatformError("not_found", `No project named "${slug}" in your account.`);
  return row;
}

export async function createProject(request: CliRequest, env: ApiEnv): Promise<Response> {
  const body = await readJsonObject(request);
  const slug = validateSlug(body.slug);
  if (body.private !== undefined && typeof body.private !== "boolean") {
    throw new PlatformError("invalid_input", "private must be true or false.");
  }
  const row = await insertOwnedProject(
    env.DB,
    { user: request.user, slug, isPrivate: body.private === true },
    maxProjectsPerAccount(env),
  );
  return Response.json({ project: toPublicProject(row) }, { status: 201 });
}

/**
 * Writes a new project with a fresh worker secret, unless the slug is taken
 * (409 `conflict`) or the account already owns `maxProjects` (403
 * `quota_exceeded`, see projectsPerAccount.ts). Every way a project is
 * created comes through here, so the slug rules are checked here: its shape
 * and the reserved names.
 */
export async function insertOwnedProject(
  db: D1Database,
  { user, slug, isPrivate }: { user: CliUser; slug: string; isPrivate: boolean },
  maxProjects: number,
): Promise<ProjectRow> {
  refuseReservedSlug(validateSlug(slug));
  const row = await insertProject(
    db,
    {
      slug,
      ownerId: user.id,
      workerSecret: randomHex(32),
      scriptName: scriptNameFor(slug),
      private: isPrivate,
      now: Date.now(),
    },
    maxProjects,
  );
  if (row) return row;
  if (await findProjectBySlug(db, slug))
    throw new PlatformError("conflict", `A project named "${slug}" already exists.`);
  throw projectCapError(slug, maxProjects, await countProjectsOwnedBy(db, user.id));
}

export async function listProjects(request: CliRequest, env: ApiEnv): Promise<Response> {
  const projects = await listProjectsOwnedBy(env.DB, request.user.id);
  return Response.json({ projects: projects.map(toPublicProject) });
}

export async function getProject(request: CliRequest, env: ApiEnv): Promise<Response> {
  const row = await requireOwnedProject(env.DB, request.user, request.params.slug!);
  const [crons, workflows] = await Promise.all([
    listProjectCrons(env.DB, row.id),
    listProjectWorkflows(env.DB, row.id),
  ]);
  // The scheduled workflows among the crons, with their next ticks (the console shows them).
  const schedules = projectSchedules(crons, Date.now());
  return Response.json({ project: { ...toPublicProject(row), crons, workflows, schedules } });
}

/** Records what the build found in the project (its crons for the scheduler, its sign-in settings for the login worker, its workflows for the console). */
export async function putProjectMetadata(request: CliRequest, env: ApiEnv): Promise<Response> {
  const row = await requireOwnedProject(env.DB, request.user, request.params.slug!);
  const body = await readJsonObject(request, 256 * 1024);
  const crons = validateMetadataCrons(body.crons);
  const auth = validateMetadataAuth(body.auth);
  const workflows = validateMetadataWorkflows(body.workflows);
  const webhooks = validateMetadataWebhooks(body.webhooks);
  await env.DB.batch([
    ...replaceProjectCronsStatements(env.DB, row.id, crons),
    ...replaceProjectAuthStatements(env.DB, row.id, auth),
    ...replaceProjectWorkflowsStatements(env.DB, row.id, workflows),
    ...replaceProjectWebhooksStatements(env.DB, row.id, webhooks),
  ]);
  return Response.json({ project: toPublicProject(row), crons, auth, workflows });
}
