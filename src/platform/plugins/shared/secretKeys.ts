import { PlatformError } from "../../../core/errors.ts";
import { fromBase64url, fromHex } from "../../../core/crypto/encoding.ts";
import { deriveKey } from "../../../core/crypto/keys.ts";

/** 32 bytes from 64 hex characters, or from base64 / base64url; anything else is a configuration error. */
export function decode32ByteKey(text: string | undefined, name: string): Uint8Array<ArrayBuffer> {
  const value = (text ?? "").trim();
  const bytes = /^[0-9a-fA-F]{64}$/.test(value) ? fromHex(value) : fromBase64url(value.replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, ""));
  if (bytes && bytes.byteLength === 32) return bytes;
  throw new PlatformError("internal", `${name} must be 32 bytes, written as 64 hex characters or base64.`);
}

/** An HMAC-SHA256 key for one purpose, derived from a configured secret (32+ characters). */
export async function purposeHmacKey(secret: string | undefined, name: string, purpose: string): Promise<CryptoKey> {
  if (!secret || secret.length < 32) throw new PlatformError("internal", `${name} must be set to at least 32 characters.`);
  return deriveKey(secret, { info: `platform-plugins:${purpose}`, algorithm: "HMAC-SHA256" });
}
