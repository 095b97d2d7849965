import { fromHex, hex } from "../../core/crypto/encoding.ts";
import { importKey } from "../../core/crypto/keys.ts";

/**
 * The workspace provider's request signing (Slack's scheme), version `v0`
 * (api.slack.com/authentication/verifying-requests-from-slack):
 *
 *   X-Slack-Signature = "v0=" + hex(HMAC-SHA256(signingSecret, "v0:" + timestamp + ":" + rawBody))
 *
 * The signing secret is the literal UTF-8 text from the app's settings page
 * (never hex-decoded). The body is the raw bytes exactly as received, read
 * once, before any parsing. The digest is compared by `crypto.subtle.verify`,
 * which is constant-time. A timestamp further than five minutes from our
 * clock, in either direction, is refused (replay window).
 */

export const SIGNATURE_HEADER = "X-Slack-Signature";
export const TIMESTAMP_HEADER = "X-Slack-Request-Timestamp";
/** Seconds a request's timestamp may lie from our clock. */
export const REPLAY_WINDOW_SECONDS = 300;

export type SignatureCheck =
  | { ok: true }
  | { ok: false; reason: "missing" | "malformed" | "stale" | "bad_signature"; message: string };

const encoder = new TextEncoder();

function bodyBytes(rawBody: Uint8Array | ArrayBuffer | string): Uint8Array {
  if (typeof rawBody === "string") return encoder.encode(rawBody);
  return rawBody instanceof Uint8Array ? rawBody : new Uint8Array(rawBody);
}

/** The bytes the provider signs: `v0:{timestamp}:` followed by the raw body. */
export function signatureBaseString(
  timestamp: string,
  rawBody: Uint8Array | ArrayBuffer | string,
): Uint8Array<ArrayBuffer> {
  const prefix = encoder.encode(`v0:${timestamp}:`);
  const body = bodyBytes(rawBody);
  const out = new Uint8Array(prefix.byteLength + body.byteLength);
  out.set(prefix, 0);
  out.set(body, prefix.byteLength);
  return out;
}

/** Hex HMAC-SHA256 keyed with the UTF-8 bytes of `secret` (the primitive under the signature). */
export async function hmacSha256Hex(secret: string, data: Uint8Array | ArrayBuffer | string): Promise<string> {
  return hex(await crypto.subtle.sign("HMAC", await importKey(secret, "HMAC-SHA256"), new Uint8Array(bodyBytes(data))));
}

/** `v0=<hex>` for a request body (used by tests; the local fake signs on its own). */
export async function signWorkspaceRequest(
  signingSecret: string,
  timestamp: string | number,
  rawBody: Uint8Array | ArrayBuffer | string,
): Promise<string> {
  return "v0=" + (await hmacSha256Hex(signingSecret, signatureBaseString(String(timestamp), rawBody)));
}

/** A request as received: its two signature headers (either may be missing) and its raw body. */
export interface SignedWorkspaceRequest {
  timestampHeader: string | null | undefined;
  signatureHeader: string | null | undefined;
  rawBody: Uint8Array | ArrayBuffer | string;
}

export async function verifyWorkspaceSignature(
  signingSecret: string,
  { timestampHeader, signatureHeader, rawBody }: SignedWorkspaceRequest,
  nowSeconds: number = Math.floor(Date.now() / 1000),
): Promise<SignatureCheck> {
  if (!signingSecret) throw new Error("verifyWorkspaceSignature: the signing secret is not configured.");
  if (!timestampHeader || !signatureHeader) {
    return { ok: false, reason: "missing", message: `Missing ${TIMESTAMP_HEADER} or ${SIGNATURE_HEADER} header.` };
  }
  if (!/^\d{1,12}$/.test(timestampHeader)) {
    return { ok: false, reason: "malformed", message: `${TIMESTAMP_HEADER} must be Unix seconds.` };
  }
  const match = /^v0=([0-9a-f]{64})$/.exec(signatureHeader);
  if (!match) {
    return {
      ok: false,
      reason: "malformed",
      message: `${SIGNATURE_HEADER} must be "v0=" followed by 64 lower-case hex digits.`,
    };
  }
  if (Math.abs(nowSeconds - Number(timestampHeader)) > REPLAY_WINDOW_SECONDS) {
    return {
      ok: false,
      reason: "stale",
      message: `${TIMESTAMP_HEADER} is more than ${REPLAY_WINDOW_SECONDS} seconds from the current time (possible replay).`,
    };
  }
  const valid = await crypto.subtle.verify(
    "HMAC",
    await importKey(signingSecret, "HMAC-SHA256"),
    fromHex(match[1]!)!,
    signatureBaseString(timestampHeader, rawBody),
  );
  return valid
    ? { ok: true }
    : { ok: false, reason: "bad_signature", message: "The request signature does not match." };
}
