import { base64url, randomBase64url } from "../../core/crypto/encoding.ts";

/** 32 random bytes, base64url (43 characters): state, nonce and PKCE verifier are each one of these. */
export function randomToken(): string {
  return randomBase64url(32);
}

/** RFC 7636 S256: base64url(SHA-256(ASCII(verifier))). */
export async function codeChallengeS256(verifier: string): Promise<string> {
  return base64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
}
