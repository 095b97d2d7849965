import { deriveKey } from "./crypto/keys.ts";
import { base64url, randomBase64url } from "./crypto/encoding.ts";
import { type SignedCheck, signature, signatureValid, signPayload, verifyPayload } from "./crypto/signed.ts";

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
 * token only from the browser holding that cookie, clears the cookie on use,
 * and records `jti` with the platform so a token is redeemed at most once.
 * The token travels only in the body of a POST from the login worker's page
 * to the project, never in a URL.
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

export type CallbackCheck = SignedCheck<
  CallbackClaims,
  "malformed" | "bad_signature" | "expired" | "wrong_project" | "wrong_browser"
>;

const encoder = new TextEncoder();
/** What `signCallbackToken` makes: 16 random bytes, base64url. */
export const JTI = /^[A-Za-z0-9_-]{22}$/;
const TOKEN_KEY = { info: "platform-callback-token-v1", algorithm: "HMAC-SHA256" } as const;

/** base64url(SHA-256(value)): what the binding cookie's value is compared by. */
export async function bindingHash(value: string): Promise<string> {
  return base64url(await crypto.subtle.digest("SHA-256", encoder.encode(value)));
}

export async function signCallbackToken(
  workerSecret: string,
  claims: Omit<CallbackClaims, "iat" | "exp" | "jti">,
  nowMS = Date.now(),
): Promise<string> {
  const iat = Math.floor(nowMS / 1000);
  const full: CallbackClaims = { ...claims, iat, exp: iat + CALLBACK_TOKEN_LIFETIME_SECONDS, jti: randomBase64url(16) };
  return signPayload(await deriveKey(workerSecret, TOKEN_KEY), full, "v1.");
}

/** Whom a callback token must be for: the project (its id and worker secret) and the browser (its binding cookie value). */
export interface CallbackTokenTarget {
  workerSecret: string;
  projectId: number;
  bindingCookieValue: string | null;
}

/** Checks signature, expiry, target project and the browser's binding cookie value. */
export async function verifyCallbackToken(
  token: string | null,
  { workerSecret, projectId, bindingCookieValue }: CallbackTokenTarget,
  nowMS = Date.now(),
): Promise<CallbackCheck> {
  const check = await verifyPayload(await deriveKey(workerSecret, TOKEN_KEY), token, "v1.");
  if (!check.ok) return check;
  const claims = check.payload as CallbackClaims;
  if (typeof claims !== "object" || claims === null || typeof claims.jti !== "string" || !JTI.test(claims.jti))
    return { ok: false, reason: "malformed" };
  if (typeof claims.exp !== "number" || nowMS / 1000 > claims.exp) return { ok: false, reason: "expired" };
  if (claims.pid !== projectId) return { ok: false, reason: "wrong_project" };
  if (!bindingCookieValue || (await bindingHash(bindingCookieValue)) !== claims.bnd)
    return { ok: false, reason: "wrong_browser" };
  return { ok: true, claims };
}

/**
 * The project's signature on a sign-in start: `GET <login>/start?project&redirect&bind&exp&sig`.
 * `sig` is HMAC-SHA256 (key derived from the project's worker secret, info
 * "platform-signin-start-v1") over the project id, slug, return path, binding
 * hash and `exp`, so the login worker only starts a sign-in whose `bind` the
 * project itself chose for a browser: nobody else can decide which browser
 * may redeem the token. Valid as long as the binding cookie (600 s).
 */
export const SIGN_IN_START_LIFETIME_SECONDS = 600;

const START_KEY = { info: "platform-signin-start-v1", algorithm: "HMAC-SHA256" } as const;

export interface SignInStart {
  slug: string;
  /** Project-relative return path, already validated. */
  redirect: string;
  /** base64url(SHA-256(binding cookie value)). */
  bind: string;
}

function startString(projectId: number, start: SignInStart, exp: number): string {
  return ["platform-signin-start-v1", projectId, start.slug, start.redirect, start.bind, exp].join("\n");
}

/** `{ exp, sig }` for the start URL's query. */
export async function signSignInStart(
  workerSecret: string,
  projectId: number,
  start: SignInStart,
  nowMS = Date.now(),
): Promise<{ exp: number; sig: string }> {
  const exp = Math.floor(nowMS / 1000) + SIGN_IN_START_LIFETIME_SECONDS;
  return { exp, sig: await signature(await deriveKey(workerSecret, START_KEY), startString(projectId, start, exp)) };
}

/** Whether the project signed this start (and it has not expired). */
export async function verifySignInStart(
  workerSecret: string,
  projectId: number,
  start: SignInStart & { exp: string | null; sig: string | null },
  nowMS = Date.now(),
): Promise<"ok" | "malformed" | "expired" | "bad_signature"> {
  if (!start.exp || !/^\d{1,12}$/.test(start.exp) || !start.sig) return "malformed";
  const exp = Number(start.exp);
  const now = nowMS / 1000;
  // Never longer-lived than the project makes them: an `exp` further out was not signed by a project.
  if (now > exp || exp > now + SIGN_IN_START_LIFETIME_SECONDS + 60) return "expired";
  const key = await deriveKey(workerSecret, START_KEY);
  return (await signatureValid(key, startString(projectId, start, exp), start.sig)) ? "ok" : "bad_signature";
}
