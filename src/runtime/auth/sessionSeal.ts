import type { SignedInUser } from "../../core/callbackToken.ts";
import { randomBase64url } from "../../core/crypto/encoding.ts";
import { deriveKey } from "../../core/crypto/keys.ts";
import { openSealed, seal } from "../../core/crypto/sealed.ts";

/**
 * The session cookie's value: the session record encrypted and authenticated
 * with AES-256-GCM. The key is derived (HKDF-SHA256, info
 * "platform-session-v1") from the project's worker secret, so only this
 * project's worker can read or mint its sessions, and any flipped bit makes
 * the value unreadable. Format: `v1.<base64url(iv ‖ ciphertext ‖ tag)>`.
 * The record carries the project id: even a value sealed under the same
 * secret is refused by another project.
 */
export interface SessionRecord extends SignedInUser {
  /** Project id the session belongs to. */
  pid: number;
  /** Issued / expires, Unix seconds. */
  iat: number;
  exp: number;
  /** Random id of this session (a fresh one at every sign-in). */
  sid: string;
}

const SESSION_KEY = { info: "platform-session-v1", algorithm: "AES-GCM-256" } as const;
/** Additional data: the same name as the key's purpose. */
const AAD = "platform-session-v1";
/** Browsers keep at most ~4 KiB per cookie. */
export const MAX_SESSION_COOKIE_LENGTH = 3800;

export function newSessionId(): string {
  return randomBase64url(16);
}

export async function sealSession(workerSecret: string, record: SessionRecord): Promise<string> {
  return seal(await deriveKey(workerSecret, SESSION_KEY), JSON.stringify(record), AAD);
}

/**
 * The record inside a cookie value, or `null` when the value is not one this
 * secret sealed (forged, altered, truncated, another project's) or its shape
 * is wrong. Expiry, project and domain are the caller's checks.
 */
export async function openSession(workerSecret: string, value: string): Promise<SessionRecord | null> {
  if (value.length > MAX_SESSION_COOKIE_LENGTH || !value.startsWith("v1.")) return null;
  const plaintext = await openSealed(await deriveKey(workerSecret, SESSION_KEY), value, AAD);
  if (plaintext === null) return null;
  let record: unknown;
  try {
    record = JSON.parse(plaintext);
  } catch {
    return null;
  }
  return isSessionRecord(record) ? record : null;
}

function isSessionRecord(value: unknown): value is SessionRecord {
  if (!value || typeof value !== "object") return false;
  const r = value as Record<string, unknown>;
  return (
    typeof r.pid === "number" &&
    typeof r.email === "string" &&
    typeof r.name === "string" &&
    (r.picture === undefined || typeof r.picture === "string") &&
    typeof r.iat === "number" &&
    typeof r.exp === "number" &&
    typeof r.sid === "string"
  );
}
