import { base64url, fromCanonicalBase64url } from "./encoding.ts";

/**
 * Sealed values: AES-256-GCM (encrypted and authenticated), a fresh 12-byte IV
 * per value, `additionalData` binding the value to where it belongs (a cookie
 * name, a table row), so a value copied elsewhere does not open.
 *
 * Written as `v1.<base64url(iv ‖ ciphertext ‖ tag)>`. `openSealed` also reads
 * the two formats written before there was one, still deployed:
 *   `v1.<base64url(iv)>.<base64url(ciphertext ‖ tag)>`  token vault rows in D1;
 *   `<base64url(iv)>.<base64url(ciphertext ‖ tag)>`     login flow cookies (10 minutes).
 * The session cookie always had the current format.
 */
const IV_BYTES = 12;
const TAG_BYTES = 16;
const encoder = new TextEncoder();

export async function seal(key: CryptoKey, plaintext: string, additionalData: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const ciphertext = new Uint8Array(
    await crypto.subtle.encrypt(
      { name: "AES-GCM", iv, additionalData: encoder.encode(additionalData) },
      key,
      encoder.encode(plaintext),
    ),
  );
  const sealed = new Uint8Array(IV_BYTES + ciphertext.length);
  sealed.set(iv);
  sealed.set(ciphertext, IV_BYTES);
  return `v1.${base64url(sealed)}`;
}

function split(value: string): { iv: Uint8Array<ArrayBuffer>; data: Uint8Array<ArrayBuffer> } | null {
  const parts = value.split(".");
  if (parts.length === 2 && parts[0] === "v1") {
    const sealed = fromCanonicalBase64url(parts[1]!);
    return sealed ? { iv: sealed.slice(0, IV_BYTES), data: sealed.slice(IV_BYTES) } : null;
  }
  const [iv, data] =
    parts.length === 3 && parts[0] === "v1" ? [parts[1]!, parts[2]!] : parts.length === 2 ? [parts[0]!, parts[1]!] : [];
  if (iv === undefined || data === undefined) return null;
  const ivBytes = fromCanonicalBase64url(iv);
  const dataBytes = fromCanonicalBase64url(data);
  return ivBytes && dataBytes ? { iv: ivBytes, data: dataBytes } : null;
}

/** The plaintext, or `null` when `value` was not sealed with this key and additional data (forged, altered, truncated). */
export async function openSealed(key: CryptoKey, value: string, additionalData: string): Promise<string | null> {
  const parts = split(value);
  if (!parts || parts.iv.length !== IV_BYTES || parts.data.length < TAG_BYTES) return null;
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: parts.iv, additionalData: encoder.encode(additionalData) },
      key,
      parts.data,
    );
    return new TextDecoder().decode(plain);
  } catch {
    return null;
  }
}
