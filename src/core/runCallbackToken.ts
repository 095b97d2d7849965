import { randomBase64url } from "./crypto/encoding.ts";
import { deriveKey } from "./crypto/keys.ts";
import { type SignedCheck, signPayload, verifyPayload } from "./crypto/signed.ts";

/**
 * The token of a run's callback URL (`ctx.callbackURL`): who holds it may
 * send that one event to that run, once, until it expires; nothing else.
 *
 * Format: `k1.<payload>.<signature>`, both base64url: HMAC-SHA256 over
 * `k1.<payload>` with a key derived (HKDF-SHA256, info
 * "platform-run-callback-token-v1") from the project's worker secret, so a
 * token of one project is worthless to every other and to every other
 * purpose (a stream token is not a callback token). Single use: `jti` is
 * recorded on the event it delivers, in the run's own log.
 */
export interface RunCallbackClaims {
  /** The run the event goes to. */
  run: string;
  /** The event's name. */
  evt: string;
  /** Expiry, epoch ms. */
  exp: number;
  /** Random id of this URL: spent by the event it delivers. */
  jti: string;
}

export type RunCallbackTokenCheck = SignedCheck<
  RunCallbackClaims,
  "malformed" | "bad_signature" | "expired" | "wrong_run"
>;

const RUN_CALLBACK_TOKEN_KEY = { info: "platform-run-callback-token-v1", algorithm: "HMAC-SHA256" } as const;
const PREFIX = "k1.";
/** What a callback token's `jti` is: 16 random bytes, base64url. */
export const RUN_CALLBACK_JTI = /^[A-Za-z0-9_-]{22}$/;

export async function signRunCallbackToken(
  workerSecret: string,
  claims: Omit<RunCallbackClaims, "jti">,
): Promise<string> {
  const full: RunCallbackClaims = { ...claims, jti: randomBase64url(16) };
  return signPayload(await deriveKey(workerSecret, RUN_CALLBACK_TOKEN_KEY), full, PREFIX);
}

/**
 * Checks the signature, that the token is for `runId` (the run the URL names)
 * and then the expiry: an expired token of this run is told apart (410), since
 * only who holds a genuine URL learns it.
 */
export async function verifyRunCallbackToken(
  token: string,
  workerSecret: string,
  runId: string,
  nowMS: number,
): Promise<RunCallbackTokenCheck> {
  const check = await verifyPayload(await deriveKey(workerSecret, RUN_CALLBACK_TOKEN_KEY), token, PREFIX);
  if (!check.ok) return check;
  const claims = check.payload as Partial<RunCallbackClaims> | null;
  if (
    typeof claims !== "object" ||
    claims === null ||
    typeof claims.run !== "string" ||
    typeof claims.evt !== "string" ||
    typeof claims.exp !== "number" ||
    typeof claims.jti !== "string" ||
    !RUN_CALLBACK_JTI.test(claims.jti)
  )
    return { ok: false, reason: "malformed" };
  if (claims.run !== runId) return { ok: false, reason: "wrong_run" };
  if (nowMS >= claims.exp) return { ok: false, reason: "expired" };
  return { ok: true, claims: claims as RunCallbackClaims };
}
