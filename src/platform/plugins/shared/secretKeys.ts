import { PlatformError } from "../../../core/errors.ts";
import { fromBase64url } from "../../../core/callbackToken.ts";

const encoder = new TextEncoder();

/** 32 bytes from 64 hex characters, or from base64 / base64url; anything else is a configuration error. */
export function decode32ByteKey(text: string | undefined, name: string): Uint8Array<ArrayBuffer> {
  const value = (text ?? "").trim();
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Uint8Array.from(value.match(/../g)!, (h) => parseInt(h, 16));
  const bytes = fromBase64url(value.replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, ""));
  if (bytes && bytes.byteLength === 32) return bytes;
  throw new PlatformError("internal", `${name} must be 32 bytes, written as 64 hex characters or base64.`);
}

/** An HMAC-SHA256 key for one purpose, derived from a configured secret (32+ characters). */
export async function purposeHmacKey(secret: string | undefined, name: string, purpose: string): Promise<CryptoKey> {
  if (!secret || secret.length < 32) throw new PlatformError("internal", `${name} must be set to at least 32 characters.`);
  const base = await crypto.subtle.importKey("raw", encoder.encode(secret), "HKDF", false, ["deriveKey"]);
  return crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(), info: encoder.encode(`platform-plugins:${purpose}`) },
    base,
    { name: "HMAC", hash: "SHA-256", length: 256 },
    false,
    ["sign", "verify"],
  );
}
