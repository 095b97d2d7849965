import { base64url, fromBase64url } from "../../core/callbackToken.ts";

/**
 * The session cookie's value: the session record encrypted and authenticated
 * with AES-256-GCM. The key is derived (HKDF-SHA256, info
 * "platform-session-v1") from the project's worker secret, so only this
 * project's worker can read or mint its sessions, and any flipped bit makes
 * the value unreadable. Format: `v1.<base64url(iv ‖ ciphertext ‖ tag)>`.
 * The record carries the project id: even a value sealed under the same
 * secret is refused by another project.
 */
export interface SessionRecord {
  /** Project id the session belongs to. */
  pid: number;
  email: string;
  name: string;
  picture?: string;
  /** Issued / expires, Unix seconds. */
  iat: number;
  exp: number;
  /** Random id of this session (a fresh one at every sign-in). */
  sid: string;
}

const encoder = new TextEncoder();
const AAD = encoder.encode("platform-session-v1");
const IV_BYTES = 12;
/** Browsers keep at most ~4 KiB per cookie. */
export const MAX_SESSION_COOKIE_LENGTH = 3800;

const keys = new Map<string, Promise<CryptoKey>>();

/** One derived key per secret and isolate: deriving costs more than decrypting. */
function sessionKey(workerSecret: string): Promise<CryptoKey> {
  let key = keys.get(workerSecret);
  if (!key) {
    key = (async () => {
      const ikm = await crypto.subtle.importKey("raw", encoder.encode(workerSecret), "HKDF", false, ["deriveKey"]);
      return crypto.subtle.deriveKey(
        { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(), info: encoder.encode("platform-session-v1") },
        ikm,
        { name: "AES-GCM", length: 256 },
        false,
        ["encrypt", "decrypt"],
      );
    })();
    if (keys.size > 16) keys.clear();
    keys.set(workerSecret, key);
  }
  return key;
}

export function newSessionId(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(16)));
}

export async function sealSession(workerSecret: string, record: SessionRecord): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const plaintext = encoder.encode(JSON.stringify(record));
  const ciphertext = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: AAD }, await sessionKey(workerSecret), plaintext));
  const sealed = new Uint8Array(IV_BYTES + ciphertext.length);
  sealed.set(iv);
  sealed.set(ciphertext, IV_BYTES);
  return `v1.${base64url(sealed)}`;
}

/**
 * The record inside a cookie value, or `null` when the value is not one this
 * secret sealed (forged, altered, truncated, another project's) or its shape
 * is wrong. Expiry, project and domain are the caller's checks.
 */
export async function openSession(workerSecret: string, value: string): Promise<SessionRecord | null> {
  if (value.length > MAX_SESSION_COOKIE_LENGTH || !value.startsWith("v1.")) return null;
  const sealed = fromBase64url(value.slice(3));
  if (!sealed || sealed.length < IV_BYTES + 16 || base64url(sealed) !== value.slice(3)) return null;
  let plaintext: ArrayBuffer;
  try {
    plaintext = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: sealed.subarray(0, IV_BYTES), additionalData: AAD },
      await sessionKey(workerSecret),
      sealed.subarray(IV_BYTES),
    );
  } catch {
    return null;
  }
  let record: unknown;
  try {
    record = JSON.parse(new TextDecoder().decode(plaintext));
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
