import { base64url, fromBase64url, fromCanonicalBase64url } from "./encoding.ts";

/**
 * HMAC-SHA256 signatures (base64url, 43 characters) and signed payloads
 * `<prefix><base64url(JSON)>.<signature>`, the signature covering everything
 * before the last ".". Verification goes through `crypto.subtle.verify`, which
 * compares in constant time: no signature is ever compared with `===`; other
 * secrets compare with `timingSafeEqual`.
 */
const encoder = new TextEncoder();
/** Longest base64url payload accepted (about 3 KiB of JSON). */
const MAX_PAYLOAD_CHARS = 4096;

export async function signature(key: CryptoKey, data: string): Promise<string> {
  return base64url(await crypto.subtle.sign("HMAC", key, encoder.encode(data)));
}

/** Whether `candidate` is the canonical base64url HMAC of `data` under `key` (constant time). */
export async function signatureValid(key: CryptoKey, data: string, candidate: unknown): Promise<boolean> {
  if (typeof candidate !== "string" || !/^[A-Za-z0-9_-]{43}$/.test(candidate)) return false;
  const bytes = fromCanonicalBase64url(candidate);
  return bytes !== null && crypto.subtle.verify("HMAC", key, bytes, encoder.encode(data));
}

/** `<prefix><base64url(JSON of payload)>.<signature>`. */
export async function signPayload(key: CryptoKey, payload: unknown, prefix = ""): Promise<string> {
  const signed = prefix + base64url(encoder.encode(JSON.stringify(payload)));
  return `${signed}.${await signature(key, signed)}`;
}

/** A verified token's claims, or why it was refused: what each token kind's `verify…` answers. */
export type SignedCheck<Claims, Reason extends string> = { ok: true; claims: Claims } | { ok: false; reason: Reason };

export type PayloadCheck = { ok: true; payload: unknown } | { ok: false; reason: "malformed" | "bad_signature" };

/** The payload of a value `signPayload` made with this key and prefix. */
export async function verifyPayload(key: CryptoKey, value: unknown, prefix = ""): Promise<PayloadCheck> {
  if (typeof value !== "string" || value.length > prefix.length + MAX_PAYLOAD_CHARS + 44 || !value.startsWith(prefix)) {
    return { ok: false, reason: "malformed" };
  }
  const match = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/.exec(value.slice(prefix.length));
  if (!match || !fromCanonicalBase64url(match[2]!)) return { ok: false, reason: "malformed" };
  if (!(await signatureValid(key, prefix + match[1]!, match[2]!))) return { ok: false, reason: "bad_signature" };
  const bytes = fromBase64url(match[1]!);
  try {
    if (bytes) return { ok: true, payload: JSON.parse(new TextDecoder().decode(bytes)) };
  } catch {
    // not JSON: malformed
  }
  return { ok: false, reason: "malformed" };
}

/** Equality of two strings that does not stop at the first difference (for values that are not HMACs, e.g. OAuth `state`). */
export function timingSafeEqual(a: string, b: string): boolean {
  const x = encoder.encode(a);
  const y = encoder.encode(b);
  let diff = x.length ^ y.length;
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}
