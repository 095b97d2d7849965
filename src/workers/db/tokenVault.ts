import { fromBase64url, fromHex } from "../../core/crypto/encoding.ts";
import { importKey } from "../../core/crypto/keys.ts";
import { openSealed, seal } from "../../core/crypto/sealed.ts";
import { PlatformError } from "../../core/errors.ts";

/**
 * OAuth and bot tokens at rest: sealed (core/crypto/sealed.ts: AES-256-GCM,
 * fresh IV) under `TOKEN_ENCRYPTION_KEY`. `context` (e.g.
 * "chatserver:access:42") is bound as additional data, so a sealed value
 * copied into another row or field does not open. Rows written before the
 * single sealed format (`v1.<iv>.<ciphertext>`) still open. It sits beside
 * the tables because connectionsStore seals what it writes; plugins use it
 * for the tokens they keep in resource metadata or hand to user code.
 */
const vaultKey = (secret: string | undefined) =>
  importKey(decode32ByteKey(secret, "TOKEN_ENCRYPTION_KEY"), "AES-GCM-256");

/** 32 bytes from 64 hex characters, or from base64 / base64url; anything else is a configuration error. */
export function decode32ByteKey(text: string | undefined, name: string): Uint8Array<ArrayBuffer> {
  const value = (text ?? "").trim();
  const bytes = /^[0-9a-fA-F]{64}$/.test(value)
    ? fromHex(value)
    : fromBase64url(value.replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, ""));
  if (bytes && bytes.byteLength === 32) return bytes;
  throw new PlatformError("internal", `${name} must be 32 bytes, written as 64 hex characters or base64.`);
}

export async function sealToken(secret: string | undefined, plaintext: string, context = ""): Promise<string> {
  return seal(await vaultKey(secret), plaintext, `v1:${context}`);
}

/** Opens a sealed value; any altered byte, another key or another context throws `internal`. */
export async function openToken(secret: string | undefined, sealed: string, context = ""): Promise<string> {
  const plain = await openSealed(await vaultKey(secret), sealed, `v1:${context}`);
  if (plain === null)
    throw new PlatformError(
      "internal",
      "A stored token could not be opened (not in the vault's format, wrong TOKEN_ENCRYPTION_KEY or altered data).",
    );
  return plain;
}
