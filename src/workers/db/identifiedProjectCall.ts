import { PlatformError } from "../../core/errors.ts";
import { IDENTITY_FAILURES, IDENTITY_HEADER, pathAndQueryOf, verifyRequestToken } from "../../core/requestToken.ts";
import { readBodyBytes } from "../../core/web/jsonBody.ts";
import { findProjectById, type ProjectRow } from "./projectsTable.ts";

/**
 * A project worker's identity-signed call to the API worker or a plugin: the
 * body (read once, at most `limitBytes`, none for GET and HEAD: the token
 * signs its hash) and the project whose worker secret signed the
 * `X-Platform-Identity` token (bound to method, path and body; 60 s), never
 * one the body names. Throws `unauthorized` (401) or `payload_too_large`
 * (413, before the token is looked at).
 */
export async function identifiedProjectCall(
  request: Request,
  db: D1Database,
  limitBytes: number,
  nowMS: number = Date.now(),
): Promise<{ project: ProjectRow; body: Uint8Array }> {
  const bodyless = request.method === "GET" || request.method === "HEAD";
  const body = bodyless ? new Uint8Array() : await readBodyBytes(request, limitBytes);
  let project: ProjectRow | null = null;
  const check = await verifyRequestToken(
    "identity",
    request.headers.get(IDENTITY_HEADER),
    { method: request.method, pathAndQuery: pathAndQueryOf(request.url), body },
    {
      lookupSecret: async (projectId) => {
        project = await findProjectById(db, projectId);
        return project?.worker_secret ?? null;
      },
      nowMS,
    },
  );
  if (!check.ok) throw new PlatformError("unauthorized", IDENTITY_FAILURES[check.reason]);
  if (!project) throw new PlatformError("unauthorized", IDENTITY_FAILURES.unknown_project);
  return { project, body };
}
