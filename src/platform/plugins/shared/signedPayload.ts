import { base64url, fromBase64url } from "../../../core/callbackToken.ts";

/**
 * `<base64url(JSON)>.<base64url(HMAC)>`: a small signed value (OAuth state,
 * resource owner refs). `crypto.subtle.verify` compares in constant time.
 */
const encoder = new TextEncoder();

export async function signPayload(key: CryptoKey, payload: unknown): Promise<string> {
  const body = base64url(encoder.encode(JSON.stringify(payload)));
  const signature = await crypto.subtle.sign("HMAC", key, encoder.encode(body));
  return `${body}.${base64url(signature)}`;
}

/** The payload when the signature verifies, else `null`. */
export async function verifyPayload(key: CryptoKey, value: string | null | undefined): Promise<unknown | null> {
  if (typeof value !== "string" || value.length > 4096) return null;
  const match = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/.exec(value);
  if (!match) return null;
  const signature = fromBase64url(match[2]!);
  if (!signature || base64url(signature) !== match[2]) return null;
  if (!(await crypto.subtle.verify("HMAC", key, signature, encoder.encode(match[1]!)))) return null;
  const bytes = fromBase64url(match[1]!);
  try {
    return bytes ? JSON.parse(new TextDecoder().decode(bytes)) : null;
  } catch {
    return null;
  }
}
