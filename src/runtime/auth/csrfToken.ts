import { randomBase64url } from "../../core/crypto/encoding.ts";
import { deriveKey } from "../../core/crypto/keys.ts";
import { signature, signatureValid } from "../../core/crypto/signed.ts";

/**
 * The local sign-in form's CSRF token: a random nonce lives in a short-lived
 * HttpOnly, SameSite=Strict cookie, and the form carries
 * HMAC-SHA256(nonce) under a key derived from the worker secret (HKDF info
 * "platform-signin-csrf-v1"). Another site can neither read the nonce nor
 * compute the token, so it cannot post the form on a user's behalf.
 */
export const CSRF_COOKIE_MAX_AGE = 600;

const CSRF_KEY = { info: "platform-signin-csrf-v1", algorithm: "HMAC-SHA256" } as const;

export function newCsrfNonce(): string {
  return randomBase64url(32);
}

export async function csrfTokenFor(workerSecret: string, nonce: string): Promise<string> {
  return signature(await deriveKey(workerSecret, CSRF_KEY), nonce);
}

export async function csrfTokenValid(
  workerSecret: string,
  nonce: string | undefined,
  token: unknown,
): Promise<boolean> {
  if (!nonce || !/^[A-Za-z0-9_-]{43}$/.test(nonce)) return false;
  return signatureValid(await deriveKey(workerSecret, CSRF_KEY), nonce, token);
}
