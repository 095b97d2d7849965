import { PlatformError } from "../../../core/errors.ts";
import { base64url, fromBase64url } from "../../../core/callbackToken.ts";
import { decode32ByteKey } from "./secretKeys.ts";

/**
 * OAuth and bot tokens at rest: AES-256-GCM under `TOKEN_ENCRYPTION_KEY`, a
 * fresh 12-byte IV per value, written `v1.<iv>.<ciphertext+tag>` (base64url).
 * `context` (e.g. "chatserver:access:42") is bound as additional data, so a
 * sealed value copied into another row or field does not open.
 */
const encoder = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey>>();

function vaultKey(secret: string | undefined): Promise<CryptoKey> {
  const raw = decode32ByteKey(secret, "TOKEN_ENCRYPTION_KEY");
  const cacheKey = base64url(raw);
  let key = keys.get(cacheKey);
  if (!key) {
    key = crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
    keys.set(cacheKey, key);
  }
  return key;
}

export async function sealToken(secret: string | undefined, plaintext: string, context = ""): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: encoder.encode(`v1:${context}`) },
    await vaultKey(secret),
    encoder.encode(plaintext),
  );
  return `v1.${base64url(iv)}.${base64url(sealed)}`;
}

/** Opens a sealed value; any altered byte, another key or another context throws `internal`. */
export async function openToken(secret: string | undefined, sealed: string, context = ""): Promise<string> {
  const match = /^v1\.([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]{22,})$/.exec(sealed);
  const iv = match ? fromBase64url(match[1]!) : null;
  const data = match ? fromBase64url(match[2]!) : null;
  if (!iv || !data) throw new PlatformError("internal", "A stored token is not in the vault's format.");
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv, additionalData: encoder.encode(`v1:${context}`) },
      await vaultKey(secret),
      data,
    );
    return new TextDecoder().decode(plain);
  } catch {
    throw new PlatformError("internal", "A stored token could not be decrypted (wrong TOKEN_ENCRYPTION_KEY or altered data).");
  }
}

export const tokenVault = { seal: sealToken, open: openToken };
