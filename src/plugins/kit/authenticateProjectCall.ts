import { PlatformError } from "../../core/errors.ts";
import { readBodyBytes } from "../../core/web/jsonBody.ts";
import { IDENTITY_FAILURES, IDENTITY_HEADER, pathAndQueryOf, verifyRequestToken } from "../../core/requestToken.ts";
import { findProjectById, type ProjectRow } from "../../workers/db/projectsTable.ts";

export { IDENTITY_FAILURES } from "../../core/requestToken.ts";

/** Default cap on a proxy call's body. */
export const PROXY_BODY_LIMIT_BYTES = 64 * 1024;

export interface AuthenticatedCall {
  project: ProjectRow;
  /** The raw body, read once (the token signs its hash); parse it with `parseJsonObject`. */
  body: Uint8Array;
}

/**
 * A proxy call from a project worker: verifies `X-Platform-Identity` (the
 * project's worker secret looked up by the id in the token; bound to method,
 * path and body; 60 s) and returns the project. Throws `unauthorized` (401)
 * or `payload_too_large` (413, the body is read before the check).
 */
export async function authenticateProjectCall(
  request: Request,
  db: D1Database,
  options: { bodyLimit?: number; now?: number } = {},
): Promise<AuthenticatedCall> {
  const body =
    request.method === "GET" || request.method === "HEAD"
      ? new Uint8Array()
      : await readBodyBytes(request, options.bodyLimit ?? PROXY_BODY_LIMIT_BYTES);
  let project: ProjectRow | null = null;
  const check = await verifyRequestToken(
    "identity",
    request.headers.get(IDENTITY_HEADER),
    async (projectId) => {
      project = await findProjectById(db, projectId);
      return project?.worker_secret ?? null;
    },
    {
      method: request.method,
      pathAndQuery: pathAndQueryOf(request.url),
      body: request.method === "GET" || request.method === "HEAD" ? null : body,
    },
    options.now,
  );
  if (!check.ok) throw new PlatformError("unauthorized", IDENTITY_FAILURES[check.reason]);
  if (!project) throw new PlatformError("unauthorized", IDENTITY_FAILURES.unknown_project);
  return { project, body };
}
