import { PlatformError } from "../../core/errors.ts";
import { IDENTITY_FAILURES, IDENTITY_HEADER, pathAndQueryOf, verifyRequestToken } from "../../core/requestToken.ts";
import { readBodyBytes } from "../../core/web/jsonBody.ts";
import { findProjectById } from "../db/projectsTable.ts";
import type { ApiEnv } from "./env.ts";

/**
 * A project worker's call to the API worker's `/internal/auth/*` routes: the
 * body (read once, at most `limitBytes`: the token signs its hash) and the
 * project the `X-Platform-Identity` token proves, never one the body names.
 * Throws `unauthorized` (401) or `payload_too_large` (413).
 */
export async function identifiedProjectCall(
  request: Request,
  env: Pick<ApiEnv, "DB">,
  limitBytes: number,
  nowMS: number = Date.now(),
): Promise<{ projectId: number; body: Uint8Array }> {
  const body = await readBodyBytes(request, limitBytes);
  const check = await verifyRequestToken(
    "identity",
    request.headers.get(IDENTITY_HEADER),
    async (projectId) => (await findProjectById(env.DB, projectId))?.worker_secret ?? null,
    { method: request.method, pathAndQuery: pathAndQueryOf(request.url), body },
    nowMS,
  );
  if (!check.ok) throw new PlatformError("unauthorized", IDENTITY_FAILURES[check.reason]);
  return { projectId: Number(check.projectId), body };
}
