import { PlatformError } from "../../core/errors.ts";
import { readJsonObject } from "../../core/web/jsonBody.ts";
import { findProjectBySlug, toPublicProject, type ProjectRow } from "../db/projectsTable.ts";
import { authenticateCliUser, type CliUser } from "./cliTokens.ts";
import type { ApiEnv } from "./env.ts";
import { scriptNameFor, validateSlug } from "./projectSlug.ts";
import { replaceProjectAuthStatements, validateMetadataAuth } from "./projectAuthSettings.ts";
import { replaceProjectCronsStatements, validateMetadataCrons } from "./projectCrons.ts";
import { listProjectWorkflows, replaceProjectWorkflowsStatements, validateMetadataWorkflows } from "./projectWorkflows.ts";

function randomSecretHex(): string {
  return [...crypto.getRandomValues(new Uint8Array(32))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Another user's project answers exactly like a missing one, so slugs do not leak ownership. */
export async function requireOwnedProject(db: D1Database, user: CliUser, slug: string): Promise<ProjectRow> {
  const row = await findProjectBySlug(db, slug);
  if (!row || row.owner_id !== user.id) throw new PlatformError("not_found", `No project named "${slug}" in your account.`);
  return row;
}

export async function createProject(request: Request, env: ApiEnv): Promise<Response> {
  const user = await authenticateCliUser(request, env.DB);
  const body = await readJsonObject(request);
  const slug = validateSlug(body.slug);
  if (body.private !== undefined && typeof body.private !== "boolean") {
    throw new PlatformError("invalid_input", "private must be true or false.");
  }
  const now = Date.now();
  const result = await env.DB.prepare(
    "INSERT INTO projects (slug, owner_id, worker_secret, script_name, private, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING *",
  )
    .bind(slug, user.id, randomSecretHex(), scriptNameFor(slug), body.private ? 1 : 0, now, now)
    .first<ProjectRow>();
  if (!result) throw new PlatformError("conflict", `A project named "${slug}" already exists.`);
  return Response.json({ project: toPublicProject(result) }, { status: 201 });
}

export async function listProjects(request: Request, env: ApiEnv): Promise<Response> {
  const user = await authenticateCliUser(request, env.DB);
  const { results } = await env.DB.prepare("SELECT * FROM projects WHERE owner_id = ? ORDER BY slug")
    .bind(user.id)
    .all<ProjectRow>();
  return Response.json({ projects: results.map(toPublicProject) });
}

export async function getProject(request: Request & { params: Record<string, string> }, env: ApiEnv): Promise<Response> {
  const user = await authenticateCliUser(request, env.DB);
  const row = await requireOwnedProject(env.DB, user, request.params.slug!);
  const [{ results: crons }, workflows] = await Promise.all([
    env.DB.prepare("SELECT name, schedule FROM project_crons WHERE project_id = ? ORDER BY name").bind(row.id).all<{ name: string; schedule: string }>(),
    listProjectWorkflows(env.DB, row.id),
  ]);
  return Response.json({ project: { ...toPublicProject(row), crons, workflows } });
}

/** Records what the build found in the project (its crons for the scheduler, its sign-in settings for the login worker, its workflows for the console). */
export async function putProjectMetadata(
  request: Request & { params: Record<string, string> },
  env: ApiEnv,
): Promise<Response> {
  const user = await authenticateCliUser(request, env.DB);
  const row = await requireOwnedProject(env.DB, user, request.params.slug!);
  const body = await readJsonObject(request, 256 * 1024);
  const crons = validateMetadataCrons(body.crons);
  const auth = validateMetadataAuth(body.auth);
  const workflows = validateMetadataWorkflows(body.workflows);
  await env.DB.batch([
    ...replaceProjectCronsStatements(env.DB, row.id, crons),
    ...replaceProjectAuthStatements(env.DB, row.id, auth),
    ...replaceProjectWorkflowsStatements(env.DB, row.id, workflows),
  ]);
  return Response.json({ project: toPublicProject(row), crons, auth, workflows });
}
