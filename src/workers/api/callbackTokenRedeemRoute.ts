import { CALLBACK_TOKEN_LIFETIME_SECONDS, JTI } from "../../core/callbackToken.ts";
import { parseSessionGrant } from "../../contracts/signInSessions.ts";
import { PlatformError } from "../../core/errors.ts";
import { parseJsonObject } from "../../core/web/jsonBody.ts";
import { recordRedeemedToken, REDEEMED_TOKEN_SKEW_SECONDS } from "../db/redeemedCallbackTokens.ts";
import type { ApiEnv } from "./env.ts";
import { identifiedProjectCall } from "../db/identifiedProjectCall.ts";
import { refuseSessionStart } from "./projectSessionRoutes.ts";

/**
 * `POST /internal/auth/redeem { jti, exp, session? }`: a project's worker,
 * about to sign a browser in with a callback token it verified, records the
 * token's `jti` and, with `session: { sid, user, exp }`, the session it
 * signs in (src/contracts/signInSessions.ts), both or neither. 200
 * `{ redeemed: true }` the first time; 409 `conflict` for a token already
 * redeemed (and no session), so a callback replayed within the token's 120 s
 * signs nobody in; 403 `quota_exceeded` when the project is at its cap of
 * live sessions (the token is spent all the same). The project comes from the
 * identity token, never from the body. Replaying this request itself is
 * harmless: its second answer is 409.
 */
export async function redeemCallbackToken(request: Request, env: ApiEnv): Promise<Response> {
  const nowMS = Date.now();
  const { project, body: bytes } = await identifiedProjectCall(request, env.DB, 1024, nowMS);
  const body = parseJsonObject(bytes);
  if (typeof body.jti !== "string" || !JTI.test(body.jti))
    throw new PlatformError("invalid_input", "jti must be a callback token's id (22 base64url characters).");
  const now = Math.floor(nowMS / 1000);
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
  const session = body.session === undefined ? undefined : parseSessionGrant(body.session, now);
  const outcome = await recordRedeemedToken(
    env.DB,
    { projectId: project.id, jti: body.jti, expiresAt: exp, session },
    now,
  );
  if (!outcome.redeemed) throw new PlatformError("conflict", "This callback token was already redeemed.");
  if (outcome.session) refuseSessionStart(outcome.session);
  return Response.json({ redeemed: true });
}
