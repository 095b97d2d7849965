import { fromHex } from "../crypto/encoding.ts";
import { anyHmacMatches, hmacKey, joinBytes } from "./hmacSha256.ts";
import { refuse, type SignedDelivery, timestampFresh, type WebhookCheck } from "./webhookCheck.ts";

/**
 * Slack: `X-Slack-Signature: v0=<hex>`, an HMAC-SHA256 of
 * `v0:<X-Slack-Request-Timestamp>:<raw body>` keyed with the app's signing
 * secret. Tolerance: 5 min, as Slack recommends.
 */
export const SLACK_TOLERANCE_SECONDS = 300;

export async function verifySlackSignature(secret: string, delivery: SignedDelivery): Promise<WebhookCheck> {
  const header = delivery.headers.get("x-slack-signature");
  const timestamp = delivery.headers.get("x-slack-request-timestamp");
  if (!header || !timestamp) {
    return refuse("missing", "The request needs X-Slack-Signature and X-Slack-Request-Timestamp headers.");
  }
  const match = /^v0=([0-9a-fA-F]{64})$/.exec(header.trim());
  if (!match || !/^\d{1,12}$/.test(timestamp)) {
    return refuse("malformed", "X-Slack-Signature must be v0=<64 hex> and X-Slack-Request-Timestamp Unix seconds.");
  }
  if (!timestampFresh(Number(timestamp), delivery.nowMS, SLACK_TOLERANCE_SECONDS)) {
    return refuse("stale", `X-Slack-Request-Timestamp is more than ${SLACK_TOLERANCE_SECONDS} s from now.`);
  }
  const key = await hmacKey(secret);
  if (!(await anyHmacMatches(key, [fromHex(match[1]!)!], joinBytes(`v0:${timestamp}:`, delivery.body)))) {
    return refuse("bad_signature", "X-Slack-Signature does not match the body and the secret.");
  }
  return { ok: true };
}
