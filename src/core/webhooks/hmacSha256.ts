/**
 * HMAC-SHA256 over byte strings for the webhook verifiers. A candidate
 * signature is checked with `crypto.subtle.verify`, which compares in
 * constant time: no signature is ever compared with `===`.
 */
const encoder = new TextEncoder();

/** The bytes of each part in order (strings as UTF-8): the signed content, e.g. `t.` + the raw body. */
export function joinBytes(...parts: (string | Uint8Array)[]): Uint8Array<ArrayBuffer> {
  const chunks = parts.map((p) => (typeof p === "string" ? encoder.encode(p) : p));
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

export function hmacKey(secret: string | Uint8Array): Promise<CryptoKey> {
  const raw = typeof secret === "string" ? encoder.encode(secret) : new Uint8Array(secret);
  return crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
}

/** Whether any candidate (32 raw bytes each) is the HMAC of `data` under `key`; every candidate is checked. */
export async function anyHmacMatches(
  key: CryptoKey,
  candidates: Uint8Array<ArrayBuffer>[],
  data: Uint8Array<ArrayBuffer>,
): Promise<boolean> {
  let matched = false;
  for (const candidate of candidates) {
    if (candidate.length === 32 && (await crypto.subtle.verify("HMAC", key, candidate, data))) matched = true;
  }
  return matched;
}
