import type { SessionGrant } from "../../contracts/signInSessions.ts";
import type { AuthProject } from "./authSite.ts";
import { postToPlatform } from "./platformAuthCall.ts";

/** The API worker's route that records a redeemed callback token (src/workers/api/callbackTokenRedeemRoute.ts). */
export const REDEEM_PATH = "/internal/auth/redeem";

/**
 * `redeemed`: first use, the session recorded: sign the browser in.
 * `replayed`: used before. `full`: the project is at its cap of live
 * sessions. `unavailable`: the platform could not say.
 */
export type Redemption = "redeemed" | "replayed" | "full" | "unavailable";

/**
 * Tells the platform a callback token is being redeemed and which session it
 * starts: one identity-signed `POST /internal/auth/redeem { jti, exp, session }`
 * through the `PLATFORM_API` service binding per sign-in. The platform keeps
 * the `jti` until the token expires and records the session in the same
 * step, answering 200 the first time, 409 after (recording no session).
 * Anything else (no binding, no answer, an error) is `unavailable`, and the
 * caller signs nobody in: a token is never accepted twice because the record
 * could not be made, and no session exists that the platform does not hold.
 */
export async function redeemCallbackTokenWithPlatform(
  project: Pick<AuthProject, "platformApi" | "secret" | "projectId">,
  token: { jti: string; exp: number },
  session: SessionGrant,
): Promise<Redemption> {
  try {
    const response = await postToPlatform(project, REDEEM_PATH, { jti: token.jti, exp: token.exp, session });
    await response.body?.cancel();
    if (response.status === 200) return "redeemed";
    if (response.status === 409) return "replayed";
    if (response.status === 403) return "full";
    console.error(`auth: ${REDEEM_PATH} answered ${response.status}`);
  } catch (error) {
    console.error(`auth: ${REDEEM_PATH} unreachable:`, error);
  }
  return "unavailable";
}
