import { deriveKey } from "../../core/crypto/keys.ts";
import { PlatformError } from "../../core/errors.ts";

/** An HMAC-SHA256 key for one purpose, derived from a configured secret (32+ characters). */
export async function purposeHmacKey(secret: string | undefined, name: string, purpose: string): Promise<CryptoKey> {
  if (!secret || secret.length < 32)
    throw new PlatformError("internal", `${name} must be set to at least 32 characters.`);
  return deriveKey(secret, { info: `platform-plugins:${purpose}`, algorithm: "HMAC-SHA256" });
}
