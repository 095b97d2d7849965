/**
 * Ed25519 verification of signed webhooks in Discord's interaction signing
 * scheme (the chat-server plugin verifies, its local fake signs): the
 * signature in `X-Signature-Ed25519` (hex, 64 bytes) is over the UTF-8 bytes
 * of `X-Signature-Timestamp` immediately followed by the raw request body,
 * checked with the application's public key (hex, 32 bytes).
 *
 * Two implementations sit side by side and pass the same known-answer tests
 * (RFC 8032 section 7.1): WebCrypto's native Ed25519 (workerd and Node 22) and
 * the pure-JS `@noble/ed25519` in its strict RFC 8032 mode. The hot path uses
 * WebCrypto: it is native code, and a public key is imported once per isolate
 * and cached. Both are exported so a benchmark can compare them.
 *
 * Discord documents no freshness window for the timestamp; we treat it as Unix
 * seconds and refuse anything more than five minutes from our clock, and the
 * plugin additionally dedupes on the interaction id.
 */
import { verifyAsync as nobleVerifyAsync } from "@noble/ed25519";
import { fromBase64url, fromHex, hex } from "./encoding.ts";

export const SIGNATURE_HEADER = "X-Signature-Ed25519";
export const TIMESTAMP_HEADER = "X-Signature-Timestamp";

/** How far the signed timestamp may lie from our clock, either way, in seconds. */
export const MAX_WEBHOOK_SKEW_SECONDS = 300;

export type Ed25519Implementation = "webcrypto" | "noble";

export type WebhookCheck =
  | { ok: true }
  | {
      ok: false;
      /** `missing`: a header is absent; `malformed`: not hex of the right length / not a Unix-seconds timestamp; `stale`: outside the window; `bad_signature`: does not verify. */
      reason: "missing" | "malformed" | "stale" | "bad_signature" | "bad_key";
      message: string;
    };

const encoder = new TextEncoder();

/** Strict lowercase-or-uppercase hex of exactly `bytes` bytes, or null. */
export function hexToBytes(text: string, bytes: number): Uint8Array<ArrayBuffer> | null {
  return text.length === bytes * 2 ? fromHex(text) : null;
}

function toBytes(data: ArrayBuffer | Uint8Array | string): Uint8Array<ArrayBuffer> {
  if (typeof data === "string") return new Uint8Array(encoder.encode(data));
  return new Uint8Array(data instanceof Uint8Array ? data : new Uint8Array(data));
}

// A plugin has one public key; import it once per isolate. Bounded so a
// caller passing many keys (tests, benchmarks) cannot grow it without limit.
const importedKeys = new Map<string, Promise<CryptoKey>>();

function webCryptoKey(publicKey: Uint8Array<ArrayBuffer>): Promise<CryptoKey> {
  const id = hex(publicKey);
  let key = importedKeys.get(id);
  if (!key) {
    if (importedKeys.size >= 16) importedKeys.clear();
    key = crypto.subtle.importKey("raw", publicKey, { name: "Ed25519" }, false, ["verify"]);
    // A key that fails to import is not cached (the next call reports it again).
    key.catch(() => importedKeys.delete(id));
    importedKeys.set(id, key);
  }
  return key;
}

/** WebCrypto Ed25519 (native). Resolves false for a key that is not a valid curve point. */
export async function verifyEd25519WebCrypto(
  publicKey: Uint8Array<ArrayBuffer>,
  signature: Uint8Array<ArrayBuffer>,
  message: Uint8Array<ArrayBuffer>,
): Promise<boolean> {
  let key: CryptoKey;
  try {
    key = await webCryptoKey(publicKey);
  } catch {
    return false;
  }
  try {
    return await crypto.subtle.verify({ name: "Ed25519" }, key, signature, message);
  } catch {
    return false;
  }
}

/** @noble/ed25519 (pure JS), strict RFC 8032 / FIPS 186-5 verification (not ZIP215). */
export async function verifyEd25519Noble(
  publicKey: Uint8Array<ArrayBuffer>,
  signature: Uint8Array<ArrayBuffer>,
  message: Uint8Array<ArrayBuffer>,
): Promise<boolean> {
  try {
    return await nobleVerifyAsync(signature, message, publicKey, { zip215: false });
  } catch {
    return false;
  }
}

const IMPLEMENTATIONS = {
  webcrypto: verifyEd25519WebCrypto,
  noble: verifyEd25519Noble,
} satisfies Record<Ed25519Implementation, unknown>;

export interface VerifyWebhookOptions {
  /** The verifier's clock (ms since the epoch); default `Date.now()`. */
  nowMS?: number;
  /** Default `webcrypto` (the faster one; see the chat-server section of docs/plugins.md). */
  implementation?: Ed25519Implementation;
}

/** A webhook as received: its two signature headers (either may be missing) and its raw body. */
export interface SignedWebhook {
  signatureHex: string | null | undefined;
  timestamp: string | null | undefined;
  rawBody: ArrayBuffer | Uint8Array | string;
}

/**
 * Checks a signed webhook: headers present and well-formed, timestamp
 * within {@link MAX_WEBHOOK_SKEW_SECONDS}, signature valid for
 * `timestamp + rawBody`. `rawBody` must be the exact bytes received.
 */
export async function verifyEd25519Webhook(
  publicKeyHex: string,
  { signatureHex, timestamp, rawBody }: SignedWebhook,
  options: VerifyWebhookOptions = {},
): Promise<WebhookCheck> {
  const publicKey = hexToBytes(publicKeyHex.trim(), 32);
  if (!publicKey) return { ok: false, reason: "bad_key", message: "The plugin's public key is not 64 hex characters." };
  if (!signatureHex || !timestamp) {
    return {
      ok: false,
      reason: "missing",
      message: `The request is not signed: headers ${SIGNATURE_HEADER} and ${TIMESTAMP_HEADER} are required.`,
    };
  }
  const signature = hexToBytes(signatureHex, 64);
  if (!signature) return { ok: false, reason: "malformed", message: `${SIGNATURE_HEADER} must be 128 hex characters.` };
  if (!/^\d{1,12}$/.test(timestamp)) {
    return { ok: false, reason: "malformed", message: `${TIMESTAMP_HEADER} must be a Unix time in seconds.` };
  }
  const nowSeconds = (options.nowMS ?? Date.now()) / 1000;
  if (Math.abs(nowSeconds - Number(timestamp)) > MAX_WEBHOOK_SKEW_SECONDS) {
    return {
      ok: false,
      reason: "stale",
      message: `${TIMESTAMP_HEADER} is more than ${MAX_WEBHOOK_SKEW_SECONDS} seconds from the current time.`,
    };
  }
  const ts = encoder.encode(timestamp);
  const body = toBytes(rawBody);
  const message = new Uint8Array(ts.length + body.length);
  message.set(ts, 0);
  message.set(body, ts.length);
  const verify = IMPLEMENTATIONS[options.implementation ?? "webcrypto"];
  const valid = await verify(publicKey, signature, message);
  return valid ? { ok: true } : { ok: false, reason: "bad_signature", message: "Invalid request signature." };
}

/**
 * Signs `timestamp + body` with an Ed25519 private key given as a 32-byte seed
 * (hex): what the provider does; used by the local fake and tests.
 * WebCrypto imports Ed25519 private keys only as PKCS#8, so the seed is wrapped
 * in the fixed 16-byte PKCS#8 prefix for Ed25519.
 */
const PKCS8_ED25519_PREFIX = [
  0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
];

function importSeed(seedHex: string, extractable: boolean): Promise<CryptoKey> {
  const seed = hexToBytes(seedHex, 32);
  if (!seed) throw new Error("An Ed25519 seed is 64 hex characters.");
  const pkcs8 = new Uint8Array(48);
  pkcs8.set(PKCS8_ED25519_PREFIX, 0);
  pkcs8.set(seed, 16);
  return crypto.subtle.importKey("pkcs8", pkcs8, { name: "Ed25519" }, extractable, ["sign"]);
}

export async function signEd25519(seedHex: string, message: Uint8Array<ArrayBuffer> | string): Promise<string> {
  const key = await importSeed(seedHex, false);
  const signature = await crypto.subtle.sign({ name: "Ed25519" }, key, toBytes(message));
  return hex(signature);
}

/** The public key (hex) of an Ed25519 seed (hex). */
export async function ed25519PublicKeyHex(seedHex: string): Promise<string> {
  const jwk = (await crypto.subtle.exportKey("jwk", await importSeed(seedHex, true))) as JsonWebKey;
  return hex(fromBase64url(jwk.x!)!);
}
