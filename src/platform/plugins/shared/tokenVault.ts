import { PlatformError } from "../../../core/errors.ts";
import { importKey } from "../../../core/crypto/keys.ts";
import { openSealed, seal } from "../../../core/crypto/sealed.ts";
import { decode32ByteKey } from "./secretKeys.ts";

/**
 * OAuth and bot tokens at rest: sealed (core/crypto/sealed.ts: AES-256-GCM,
 * fresh IV) under `TOKEN_ENCRYPTION_KEY`. `context` (e.g.
 * "chatserver:access:42") is bound as additional data, so a sealed value
 * copied into another row or field does not open. Rows written before the
 * single sealed format (`v1.<iv>.<ciphertext>`) still open.
 */
const vaultKey = (secret: string | undefined) => importKey(decode32ByteKey(secret, "TOKEN_ENCRYPTION_KEY"), "AES-GCM-256");

export async function sealToken(secret: string | undefined, plaintext: string, context = ""): Promise<string> {
  return seal(await vaultKey(secret), plaintext, `v1:${context}`);
}

/** Opens a sealed value; any altered byte, another key or another context throws `internal`. */
export async function openToken(secret: string | undefined, sealed: string, context = ""): Promise<string> {
  const plain = await openSealed(await vaultKey(secret), sealed, `v1:${context}`);
  if (plain === null) throw new PlatformError("internal", "A stored token could not be opened (not in the vault's format, wrong TOKEN_ENCRYPTION_KEY or altered data).");
  return plain;
}

export const tokenVault = { seal: sealToken, open: openToken };
