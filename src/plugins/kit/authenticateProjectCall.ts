import type { ProjectRow } from "../../workers/db/projectsTable.ts";
import { identifiedProjectCall } from "../../workers/db/identifiedProjectCall.ts";

/** Default cap on a proxy call's body. */
const PROXY_BODY_LIMIT_BYTES = 64 * 1024;

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
export function authenticateProjectCall(
  request: Request,
  db: D1Database,
  options: { bodyLimit?: number } = {},
): Promise<AuthenticatedCall> {
  return identifiedProjectCall(request, db, options.bodyLimit ?? PROXY_BODY_LIMIT_BYTES);
}
