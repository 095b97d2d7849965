import { decodePathSegment } from "../../core/web/pathSegment.ts";
import { PlatformError } from "../../core/errors.ts";
import { readJsonObject } from "../../core/web/jsonBody.ts";
import { deleteProjectSecret, listProjectSecrets, putProjectSecret } from "../db/projectSecretsTable.ts";
import type { ApiEnv } from "./env.ts";
import { requireOwnedProject } from "./projectRoutes.ts";
import { checkSecretName, checkSecretValue, MAX_SECRET_VALUE_BYTES, MAX_SECRETS_PER_PROJECT } from "./secretRules.ts";
import type { CliRequest } from "./withCliUser.ts";

/**
 * A project's secrets: `platform secret put|list|delete`.
 * Values go in and never come out: the list names them, and the only reader
 * of a value is the upload of the project's worker (deploymentRoute.ts),
 * which binds each as `secret_text`. A change reaches the running project
 * with its next push; every push binds the whole current set, so secrets
 * survive later pushes and a deleted one is gone from the next.
 */

/** A change reaches the running worker with the next push (which binds the whole current set). */
const APPLIES = "next_push";

/** The name in the path, decoded once (the router leaves it percent-encoded). */
function nameIn(request: CliRequest): string {
  const name = decodePathSegment(request.params.name!);
  if (name === null)
    throw new PlatformError("invalid_input", `${JSON.stringify(request.params.name)} is not a secret name.`);
  return name;
}

/** `GET /projects/:slug/secrets` → `{ secrets: [{ name, updatedAt }] }`: names only. */
export async function listSecrets(request: CliRequest, env: ApiEnv): Promise<Response> {
  const project = await requireOwnedProject(env.DB, request.user, request.params.slug!);
  return Response.json({ secrets: await listProjectSecrets(env.DB, project.id) }, noStore);
}

/** `PUT /projects/:slug/secrets/:name` `{ value }` → `{ secret: { name }, created, applies: "next_push" }`. */
export async function putSecret(request: CliRequest, env: ApiEnv): Promise<Response> {
  const project = await requireOwnedProject(env.DB, request.user, request.params.slug!);
  const name = checkSecretName(nameIn(request));
  // The value's limit is checked exactly below; the body may hold it JSON-escaped (up to 6 bytes a byte).
  const body = await readJsonObject(request, MAX_SECRET_VALUE_BYTES * 6 + 1024);
  const value = checkSecretValue(name, body.value);
  const secrets = await listProjectSecrets(env.DB, project.id);
  if (!secrets.some((secret) => secret.name === name) && secrets.length >= MAX_SECRETS_PER_PROJECT)
    throw new PlatformError(
      "conflict",
      `Project "${project.slug}" has ${MAX_SECRETS_PER_PROJECT} secrets, the most it may have: delete one first.`,
    );
  const { created } = await putProjectSecret(
    env.DB,
    env.SECRETS_ENCRYPTION_KEY,
    { projectId: project.id, name, value },
    Date.now(),
  );
  return Response.json({ secret: { name }, created, applies: APPLIES }, { status: created ? 201 : 200, ...noStore });
}

/** `DELETE /projects/:slug/secrets/:name` → `{ deleted: name, applies }`; 404 when there is none. */
export async function deleteSecret(request: CliRequest, env: ApiEnv): Promise<Response> {
  const project = await requireOwnedProject(env.DB, request.user, request.params.slug!);
  const name = nameIn(request);
  if (!(await deleteProjectSecret(env.DB, project.id, name)))
    throw new PlatformError("not_found", `Project "${project.slug}" has no secret named ${JSON.stringify(name)}.`);
  return Response.json({ deleted: name, applies: APPLIES }, noStore);
}

const noStore = { headers: { "Cache-Control": "no-store" } };
