import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/**
 * A secret binding's value as `platform up` keeps it on disk: AES-256-GCM
 * under a key derived from this machine's key (machineKey.ts, kept in the
 * user's config folder, never in the state folder), so the state folder
 * (a backup, a copied folder, a `grep`) never holds a secret in plain text,
 * and a sealed value that was altered is refused, not replayed.
 */
const PREFIX = "sealed:v1:";

function sealingKey(machineKey: Buffer): Buffer {
  return Buffer.from(hkdfSync("sha256", machineKey, Buffer.alloc(0), "platform up saved secret bindings", 32));
}

export function sealSecretText(machineKey: Buffer, text: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", sealingKey(machineKey), iv);
  const sealed = Buffer.concat([cipher.update(text, "utf8"), cipher.final()]);
  return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString("base64");
}

/** The value `sealSecretText` sealed; throws when it was sealed by another machine's key or altered. */
export function openSecretText(machineKey: Buffer, sealed: string): string {
  if (!sealed.startsWith(PREFIX)) throw new Error("a secret binding is not sealed");
  const raw = Buffer.from(sealed.slice(PREFIX.length), "base64");
  const decipher = createDecipheriv("aes-256-gcm", sealingKey(machineKey), raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  try {
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
  } catch {
    throw new Error("a secret binding was sealed with another machine's key, or altered");
  }
}
