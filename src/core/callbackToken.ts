import { deriveKey } from "./crypto/keys.ts";
import { base64url, randomBase64url } from "./crypto/encoding.ts";
import { signPayload, verifyPayload } from "./crypto/signed.ts";

/**
 * The login worker's callback token: how a sign-in that happened at the
 * identity provider reaches one project, once, in the browser that started it.
 *
 * Format: `v1.<payload>.<signature>`, both base64url. The signature is
 * HMAC-SHA256 over `v1.<payload>` with a key derived (HKDF-SHA256, info
 * "platform-callback-token-v1") from the target project's worker secret, so a
 * token minted for one project is worthless to every other. Lifetime: 120 s.
 * `bnd` is the SHA-256 (base64url) of the random value the project put in the
 * browser's binding cookie when the flow started; the project accepts the
 * token only from the browser holding that cookie, and clears the cookie on use.
 */
export const CALLBACK_TOKEN_LIFETIME_SECONDS = 120;

/** Who signed in, as the login worker vouches for them: what the token carries, the session keeps and `auth.user()` returns. */
export interface SignedInUser {
  email: string;
  name: string;
  picture?: string;
}

export interface CallbackClaims extends SignedInUser {
  /** Target project id. */
  pid: number;
  /** base64url(SHA-256(binding cookie value)). */
  bnd: string;
  /** Same-origin path inside the project to land on after sign-in. */
  rdr: string;
  iat: number;
  exp: number;
  /** Random id of this token. */
  jti: string;
}

export type CallbackCheck =
  | { ok: true; claims: CallbackClaims }
  | { ok: false; reason: "malformed" | "bad_signature" | "expired" | "wrong_project" | "wrong_browser" };

const encoder = new TextEncoder();
const TOKEN_KEY = { info: "platform-callback-token-v1", algorithm: "HMAC-SHA256" } as const;

/** base64url(SHA-256(value)): what the binding cookie's value is compared by. */
export async function bindingHash(value: string): Promise<string> {
  return base64url(await crypto.subtle.digest("SHA-256", encoder.encode(value)));
}

export async function signCallbackToken(
  workerSecret: string,
  claims: Omit<CallbackClaims, "iat" | "exp" | "jti">,
  nowMs = Date.now(),
): Promise<string> {
  const iat = Math.floor(nowMs / 1000);
  const full: CallbackClaims = { ...claims, iat, exp: iat + CALLBACK_TOKEN_LIFETIME_SECONDS, jti: randomBase64url(16) };
  return signPayload(await deriveKey(workerSecret, TOKEN_KEY), full, "v1.");
}

/** Checks signature, expiry, target project and the browser's binding cookie value. */
export async function verifyCallbackToken(
  token: string | null,
  workerSecret: string,
  projectId: number,
  bindingCookieValue: string | null,
  nowMs = Date.now(),
): Promise<CallbackCheck> {
  const check = await verifyPayload(await deriveKey(workerSecret, TOKEN_KEY), token, "v1.");
  if (!check.ok) return check;
  const claims = check.payload as CallbackClaims;
  if (typeof claims !== "object" || claims === null) return { ok: false, reason: "malformed" };
  if (typeof claims.exp !== "number" || nowMs / 1000 > claims.exp) return { ok: false, reason: "expired" };
  if (claims.pid !== projectId) return { ok: false, reason: "wrong_project" };
  if (!bindingCookieValue || (await bindingHash(bindingCookieValue)) !== claims.bnd)
    return { ok: false, reason: "wrong_browser" };
  return { ok: true, claims };
}
