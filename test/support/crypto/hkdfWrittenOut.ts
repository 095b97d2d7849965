const encoder = new TextEncoder();

/**
 * HKDF-SHA256 with an empty salt, written out with WebCrypto the way every copy did before
 * core/crypto/keys.ts: what values already deployed were sealed and signed with.
 */
export async function hkdfWrittenOut(secret: string, info: string, algorithm: "HMAC" | "AES-GCM"): Promise<CryptoKey> {
  const ikm = await crypto.subtle.importKey("raw", encoder.encode(secret), "HKDF", false, ["deriveKey"]);
  return crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(), info: encoder.encode(info) },
    ikm,
    algorithm === "HMAC" ? { name: "HMAC", hash: "SHA-256", length: 256 } : { name: "AES-GCM", length: 256 },
    false,
    algorithm === "HMAC" ? ["sign", "verify"] : ["encrypt", "decrypt"],
  );
}
