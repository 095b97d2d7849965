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

export interface CallbackClaims {
  /** Target project id. */
  pid: number;
  email: string;
  name: string;
  picture?: string;
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

export function base64url(bytes: ArrayBuffer | Uint8Array): string {
  let s = "";
  for (const b of bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes)) s += String.fromCharCode(b);
  return btoa(s).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

export function fromBase64url(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  try {
    return Uint8Array.from(atob(text.replaceAll("-", "+").replaceAll("_", "/") + "===".slice((text.length + 3) % 4)), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

/** base64url(SHA-256(value)): what the binding cookie's value is compared by. */
export async function bindingHash(value: string): Promise<string> {
  return base64url(await crypto.subtle.digest("SHA-256", encoder.encode(value)));
}

async function tokenKey(workerSecret: string): Promise<CryptoKey> {
  const ikm = await crypto.subtle.importKey("raw", encoder.encode(workerSecret), "HKDF", false, ["deriveKey"]);
  return crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(), info: encoder.encode("platform-callback-token-v1") },
    ikm,
    { name: "HMAC", hash: "SHA-256", length: 256 },
    false,
    ["sign", "verify"],
  );
}

export async function signCallbackToken(
  workerSecret: string,
  claims: Omit<CallbackClaims, "iat" | "exp" | "jti">,
  nowMs = Date.now(),
): Promise<string> {
  const iat = Math.floor(nowMs / 1000);
  const full: CallbackClaims = { ...claims, iat, exp: iat + CALLBACK_TOKEN_LIFETIME_SECONDS, jti: base64url(crypto.getRandomValues(new Uint8Array(16))) };
  const payload = base64url(encoder.encode(JSON.stringify(full)));
  const signature = await crypto.subtle.sign("HMAC", await tokenKey(workerSecret), encoder.encode(`v1.${payload}`));
  return `v1.${payload}.${base64url(signature)}`;
}

/** Checks signature, expiry, target project and the browser's binding cookie value. */
export async function verifyCallbackToken(
  token: string | null,
  workerSecret: string,
  projectId: number,
  bindingCookieValue: string | null,
  nowMs = Date.now(),
): Promise<CallbackCheck> {
  const match = token ? /^v1\.([A-Za-z0-9_-]{1,4096})\.([A-Za-z0-9_-]{43})$/.exec(token) : null;
  if (!match) return { ok: false, reason: "malformed" };
  const signature = fromBase64url(match[2]!);
  if (!signature || base64url(signature) !== match[2]) return { ok: false, reason: "malformed" };
  const valid = await crypto.subtle.verify("HMAC", await tokenKey(workerSecret), signature, encoder.encode(`v1.${match[1]}`));
  if (!valid) return { ok: false, reason: "bad_signature" };
  let claims: CallbackClaims;
  try {
    claims = JSON.parse(new TextDecoder().decode(fromBase64url(match[1]!)!)) as CallbackClaims;
  } catch {
    return { ok: false, reason: "malformed" };
  }
  if (typeof claims.exp !== "number" || nowMs / 1000 > claims.exp) return { ok: false, reason: "expired" };
  if (claims.pid !== projectId) return { ok: false, reason: "wrong_project" };
  if (!bindingCookieValue || (await bindingHash(bindingCookieValue)) !== claims.bnd) return { ok: false, reason: "wrong_browser" };
  return { ok: true, claims };
}
