/**
 * Slack request signing, version `v0`
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

export const SLACK_SIGNATURE_HEADER = "X-Slack-Signature";
export const SLACK_TIMESTAMP_HEADER = "X-Slack-Request-Timestamp";
/** Seconds a request's timestamp may lie from our clock. */
export const SLACK_REPLAY_WINDOW_SECONDS = 300;

export type SlackSignatureCheck =
  | { ok: true }
  | { ok: false; reason: "missing" | "malformed" | "stale" | "bad_signature"; message: string };

const encoder = new TextEncoder();

function bodyBytes(rawBody: Uint8Array | ArrayBuffer | string): Uint8Array {
  if (typeof rawBody === "string") return encoder.encode(rawBody);
  return rawBody instanceof Uint8Array ? rawBody : new Uint8Array(rawBody);
}

/** The bytes Slack signs: `v0:{timestamp}:` followed by the raw body. */
export function slackBaseString(timestamp: string, rawBody: Uint8Array | ArrayBuffer | string): Uint8Array<ArrayBuffer> {
  const prefix = encoder.encode(`v0:${timestamp}:`);
  const body = bodyBytes(rawBody);
  const out = new Uint8Array(prefix.byteLength + body.byteLength);
  out.set(prefix, 0);
  out.set(body, prefix.byteLength);
  return out;
}

function hmacKey(signingSecret: string, usage: "sign" | "verify"): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", encoder.encode(signingSecret), { name: "HMAC", hash: "SHA-256" }, false, [usage]);
}

function fromHex(hex: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** Hex HMAC-SHA256 keyed with the UTF-8 bytes of `secret` (the primitive under the signature). */
export async function hmacSha256Hex(secret: string, data: Uint8Array | ArrayBuffer | string): Promise<string> {
  const mac = await crypto.subtle.sign("HMAC", await hmacKey(secret, "sign"), new Uint8Array(bodyBytes(data)));
  return [...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** `v0=<hex>` for a request body (used by the local fake provider and tests). */
export async function signSlackRequest(
  signingSecret: string,
  timestamp: string | number,
  rawBody: Uint8Array | ArrayBuffer | string,
): Promise<string> {
  return "v0=" + (await hmacSha256Hex(signingSecret, slackBaseString(String(timestamp), rawBody)));
}

export async function verifySlackSignature(
  signingSecret: string,
  timestampHeader: string | null | undefined,
  signatureHeader: string | null | undefined,
  rawBody: Uint8Array | ArrayBuffer | string,
  nowSeconds: number = Math.floor(Date.now() / 1000),
): Promise<SlackSignatureCheck> {
  if (!signingSecret) throw new Error("verifySlackSignature: the signing secret is not configured.");
  if (!timestampHeader || !signatureHeader) {
    return { ok: false, reason: "missing", message: `Missing ${SLACK_TIMESTAMP_HEADER} or ${SLACK_SIGNATURE_HEADER} header.` };
  }
  if (!/^\d{1,12}$/.test(timestampHeader)) {
    return { ok: false, reason: "malformed", message: `${SLACK_TIMESTAMP_HEADER} must be Unix seconds.` };
  }
  const match = /^v0=([0-9a-f]{64})$/.exec(signatureHeader);
  if (!match) {
    return { ok: false, reason: "malformed", message: `${SLACK_SIGNATURE_HEADER} must be "v0=" followed by 64 lower-case hex digits.` };
  }
  if (Math.abs(nowSeconds - Number(timestampHeader)) > SLACK_REPLAY_WINDOW_SECONDS) {
    return {
      ok: false,
      reason: "stale",
      message: `${SLACK_TIMESTAMP_HEADER} is more than ${SLACK_REPLAY_WINDOW_SECONDS} seconds from the current time (possible replay).`,
    };
  }
  const valid = await crypto.subtle.verify(
    "HMAC",
    await hmacKey(signingSecret, "verify"),
    fromHex(match[1]!),
    slackBaseString(timestampHeader, rawBody),
  );
  return valid ? { ok: true } : { ok: false, reason: "bad_signature", message: "The request signature does not match." };
}
