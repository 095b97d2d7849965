import { base64url, fromBase64url } from "../../core/callbackToken.ts";

/**
 * The local sign-in form's CSRF token: a random nonce lives in a short-lived
 * HttpOnly, SameSite=Strict cookie, and the form carries
 * HMAC-SHA256(nonce) under a key derived from the worker secret (HKDF info
 * "platform-signin-csrf-v1"). Another site can neither read the nonce nor
 * compute the token, so it cannot post the form on a user's behalf.
 */
export const CSRF_COOKIE_MAX_AGE = 600;

const encoder = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey>>();

function csrfKey(workerSecret: string): Promise<CryptoKey> {
  let key = keys.get(workerSecret);
  if (!key) {
    key = (async () => {
      const ikm = await crypto.subtle.importKey("raw", encoder.encode(workerSecret), "HKDF", false, ["deriveKey"]);
      return crypto.subtle.deriveKey(
        { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(), info: encoder.encode("platform-signin-csrf-v1") },
        ikm,
        { name: "HMAC", hash: "SHA-256", length: 256 },
        false,
        ["sign", "verify"],
      );
    })();
    if (keys.size > 16) keys.clear();
    keys.set(workerSecret, key);
  }
  return key;
}

export function newCsrfNonce(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

export async function csrfTokenFor(workerSecret: string, nonce: string): Promise<string> {
  return base64url(await crypto.subtle.sign("HMAC", await csrfKey(workerSecret), encoder.encode(nonce)));
}

/** Constant-time: `crypto.subtle.verify` compares the MAC. */
export async function csrfTokenValid(workerSecret: string, nonce: string | undefined, token: unknown): Promise<boolean> {
  if (!nonce || !/^[A-Za-z0-9_-]{43}$/.test(nonce) || typeof token !== "string" || !/^[A-Za-z0-9_-]{43}$/.test(token)) return false;
  const signature = fromBase64url(token);
  if (!signature || signature.length !== 32) return false;
  return crypto.subtle.verify("HMAC", await csrfKey(workerSecret), signature, encoder.encode(nonce));
}
