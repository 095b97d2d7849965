import { base64url } from "./encoding.ts";

/**
 * Every WebCrypto key the platform uses, derived or imported in one place and
 * memoised per isolate (deriving costs more than the operation it serves).
 *
 * `deriveKey` is HKDF-SHA256 with an empty salt: `info` names the purpose, so
 * one secret yields unrelated keys per purpose. The `info` strings in use are
 * part of deployed formats (sessions, cookies, tokens); changing one makes
 * every value sealed or signed under it unreadable.
 */
export type KeyAlgorithm = "HMAC-SHA256" | "AES-GCM-256";

export interface KeyPurpose {
  /** HKDF `info`, e.g. "platform-session-v1". */
  info: string;
  algorithm: KeyAlgorithm;
}

const encoder = new TextEncoder();
const MAX_CACHED = 64;
const cache = new Map<string, Promise<CryptoKey>>();

const PARAMS = {
  "HMAC-SHA256": {
    derived: { name: "HMAC", hash: "SHA-256", length: 256 },
    imported: { name: "HMAC", hash: "SHA-256" },
    usages: ["sign", "verify"],
  },
  "AES-GCM-256": {
    derived: { name: "AES-GCM", length: 256 },
    imported: { name: "AES-GCM" },
    usages: ["encrypt", "decrypt"],
  },
} as const;

function memoised(cacheKey: string, make: () => Promise<CryptoKey>): Promise<CryptoKey> {
  let key = cache.get(cacheKey);
  if (!key) {
    key = make();
    // A failed import is not kept: the next call tries again.
    key.catch(() => cache.delete(cacheKey));
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(cacheKey, key);
  }
  return key;
}

/** The key for `purpose` derived from `secret` (HKDF-SHA256, empty salt). */
export function deriveKey(secret: string, purpose: KeyPurpose): Promise<CryptoKey> {
  return memoised(`hkdf\0${purpose.algorithm}\0${purpose.info}\0${secret}`, async () => {
    const ikm = await crypto.subtle.importKey("raw", encoder.encode(secret), "HKDF", false, ["deriveKey"]);
    const { derived, usages } = PARAMS[purpose.algorithm];
    return crypto.subtle.deriveKey(
      { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(), info: encoder.encode(purpose.info) },
      ikm,
      derived,
      false,
      [...usages],
    );
  });
}

/** `material` used as the key itself (a configured raw key, or a secret the protocol keys HMAC with directly). */
export function importKey(material: string | Uint8Array<ArrayBuffer>, algorithm: KeyAlgorithm): Promise<CryptoKey> {
  const bytes = typeof material === "string" ? encoder.encode(material) : material;
  return memoised(`raw\0${algorithm}\0${base64url(bytes)}`, () => {
    const { imported, usages } = PARAMS[algorithm];
    return crypto.subtle.importKey("raw", bytes, imported, false, [...usages]);
  });
}
