/**
 * Byte encodings, one implementation each: base64url (unpadded, RFC 4648 §5)
 * for tokens, cookies and sealed values; hex for digests and random ids.
 * `btoa`/`atob` are native in workerd and Node, so no library is needed.
 */

export function base64url(bytes: ArrayBuffer | Uint8Array): string {
  let s = "";
  for (const b of bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes)) s += String.fromCharCode(b);
  return btoa(s).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** The bytes of an unpadded base64url text, or `null` when it is not one. */
export function fromBase64url(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  try {
    return Uint8Array.from(
      atob(text.replaceAll("-", "+").replaceAll("_", "/") + "===".slice((text.length + 3) % 4)),
      (c) => c.charCodeAt(0),
    );
  } catch {
    return null;
  }
}

/**
 * Like `fromBase64url`, but only the canonical spelling (the last character's
 * spare bits zero): a signature or sealed value has exactly one accepted text.
 */
export function fromCanonicalBase64url(text: string): Uint8Array<ArrayBuffer> | null {
  const bytes = fromBase64url(text);
  return bytes && base64url(bytes) === text ? bytes : null;
}

export function hex(bytes: ArrayBuffer | Uint8Array): string {
  return [...(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");
}

/** The bytes of an even-length hex text (either case), or `null`. */
export function fromHex(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(text)) return null;
  return Uint8Array.from(text.match(/../g) ?? [], (h) => parseInt(h, 16));
}

/** `byteCount` random bytes, base64url. */
export function randomBase64url(byteCount: number): string {
  return base64url(crypto.getRandomValues(new Uint8Array(byteCount)));
}

/** `byteCount` random bytes, hex. */
export function randomHex(byteCount: number): string {
  return hex(crypto.getRandomValues(new Uint8Array(byteCount)));
}
