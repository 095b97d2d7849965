import { CALLBACK_TOKEN_LIFETIME_SECONDS, JTI } from "../../core/callbackToken.ts";
import { PlatformError } from "../../core/errors.ts";
import { IDENTITY_FAILURES, IDENTITY_HEADER, pathAndQueryOf, verifyRequestToken } from "../../core/requestToken.ts";
import { parseJsonObject, readBodyBytes } from "../../core/web/jsonBody.ts";
import { findProjectById } from "../db/projectsTable.ts";
import { recordRedeemedToken, REDEEMED_TOKEN_SKEW_SECONDS } from "../db/redeemedCallbackTokens.ts";
import type { ApiEnv } from "./env.ts";

/**
 * `POST /internal/auth/redeem { jti, exp }`: a project's worker, about to
 * sign a browser in with a callback token it verified, records the token's
 * `jti`. 200 `{ redeemed: true }` the first time; 409 `conflict` for a token
 * already redeemed, so a callback replayed within the token's 120 s signs
 * nobody in. The project comes from the identity token, never from the body.
 * Replaying this request itself is harmless: its second answer is 409.
 */
export async function redeemCallbackToken(request: Request, env: ApiEnv): Promise<Response> {
  const nowMs = Date.now();
  const bytes = await readBodyBytes(request, 1024);
  const check = await verifyRequestToken(
    "identity",
    request.headers.get(IDENTITY_HEADER),
    async (projectId) => (await findProjectById(env.DB, projectId))?.worker_secret ?? null,
    { method: request.method, pathAndQuery: pathAndQueryOf(request.url), body: bytes },
    nowMs,
  );
  if (!check.ok) throw new PlatformError("unauthorized", IDENTITY_FAILURES[check.reason]);
  const body = parseJsonObject(bytes);
  if (typeof body.jti !== "string" || !JTI.test(body.jti))
    throw new PlatformError("invalid_input", "jti must be a callback token's id (22 base64url characters).");
  const now = Math.floor(nowMs / 1000);
  const exp = body.exp;
  // Only a live token's expiry: a caller cannot keep rows for longer than a token lives.
  if (
    typeof exp !== "number" ||
    !Number.isSafeInteger(exp) ||
    exp < now - REDEEMED_TOKEN_SKEW_SECONDS ||
    exp > now + CALLBACK_TOKEN_LIFETIME_SECONDS + REDEEMED_TOKEN_SKEW_SECONDS
  ) {
    throw new PlatformError(
      "invalid_input",
      `exp must be the Unix time (seconds) a live callback token expires: at most ${CALLBACK_TOKEN_LIFETIME_SECONDS} s from now.`,
    );
  }
  if (!(await recordRedeemedToken(env.DB, Number(check.projectId), body.jti, exp, now)))
    throw new PlatformError("conflict", "This callback token was already redeemed.");
  return Response.json({ redeemed: true });
}
