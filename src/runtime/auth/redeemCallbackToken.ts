import { IDENTITY_HEADER, signRequestToken } from "../../core/requestToken.ts";
import type { AuthSite } from "./authSite.ts";

/** The API worker's route that records a redeemed callback token (src/workers/api/callbackTokenRedeemRoute.ts). */
export const REDEEM_PATH = "/internal/auth/redeem";

/** `redeemed`: first use, sign the browser in. `replayed`: used before. `unavailable`: the platform could not say. */
export type Redemption = "redeemed" | "replayed" | "unavailable";

/**
 * Tells the platform a callback token is being redeemed: one identity-signed
 * `POST /internal/auth/redeem { jti, exp }` through the `PLATFORM_API`
 * service binding per sign-in. The platform keeps the `jti` until the token
 * expires and answers 200 the first time, 409 after. Anything else (no
 * binding, no answer, an error) is `unavailable`, and the caller signs nobody
 * in: a token is never accepted twice because the record could not be made.
 */
export async function redeemCallbackToken(
  platformApi: Fetcher | undefined,
  site: Pick<AuthSite, "secret" | "projectId">,
  token: { jti: string; exp: number },
): Promise<Redemption> {
  if (!platformApi || typeof platformApi.fetch !== "function") return "unavailable";
  const body = JSON.stringify({ jti: token.jti, exp: token.exp });
  try {
    const response = await platformApi.fetch(`https://platform.internal${REDEEM_PATH}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        [IDENTITY_HEADER]: await signRequestToken("identity", site.projectId, site.secret, {
          method: "POST",
          pathAndQuery: REDEEM_PATH,
          body,
        }),
      },
      body,
    });
    await response.body?.cancel();
    if (response.status === 200) return "redeemed";
    if (response.status === 409) return "replayed";
    console.error(`auth: ${REDEEM_PATH} answered ${response.status}`);
  } catch (error) {
    console.error(`auth: ${REDEEM_PATH} unreachable:`, error);
  }
  return "unavailable";
}
