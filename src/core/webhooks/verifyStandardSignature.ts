import { fromBase64url } from "../crypto/encoding.ts";
import { anyHmacMatches, hmacKey, joinBytes } from "./hmacSha256.ts";
import { refuse, type SignedDelivery, timestampFresh, type WebhookCheck } from "./webhookCheck.ts";

/**
 * Standard Webhooks (standardwebhooks.com): `webhook-id`, `webhook-timestamp`
 * (Unix seconds) and `webhook-signature`, a space-separated list of
 * `v1,<base64>`, each an HMAC-SHA256 of `<id>.<timestamp>.<raw body>` keyed
 * with the base64 bytes after the secret's `whsec_` prefix. Tolerance: 5 min.
 */
export const STANDARD_TOLERANCE_SECONDS = 300;

/** Standard base64 (padded or not) or base64url, or null. */
function fromBase64(text: string): Uint8Array<ArrayBuffer> | null {
  return fromBase64url(text.replace(/=+$/, "").replaceAll("+", "-").replaceAll("/", "_"));
}

export async function verifyStandardSignature(secret: string, delivery: SignedDelivery): Promise<WebhookCheck> {
  const keyBytes = fromBase64(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret);
  if (!keyBytes || keyBytes.length === 0) {
    return refuse("bad_secret", "The webhook's secret must be whsec_ followed by base64.");
  }
  const id = delivery.headers.get("webhook-id");
  const timestamp = delivery.headers.get("webhook-timestamp");
  const header = delivery.headers.get("webhook-signature");
  if (!id || !timestamp || !header) {
    return refuse("missing", "The request needs webhook-id, webhook-timestamp and webhook-signature headers.");
  }
  if (!/^\d{1,12}$/.test(timestamp)) return refuse("malformed", "webhook-timestamp must be Unix seconds.");
  const candidates = header
    .split(" ")
    .filter((item) => item.startsWith("v1,"))
    .map((item) => fromBase64(item.slice(3)))
    .filter((bytes): bytes is Uint8Array<ArrayBuffer> => bytes !== null);
  if (candidates.length === 0) return refuse("malformed", "webhook-signature holds no v1,<base64> signature.");
  if (!timestampFresh(Number(timestamp), delivery.nowMS, STANDARD_TOLERANCE_SECONDS)) {
    return refuse("stale", `webhook-timestamp is more than ${STANDARD_TOLERANCE_SECONDS} s from now.`);
  }
  const key = await hmacKey(keyBytes);
  if (!(await anyHmacMatches(key, candidates, joinBytes(`${id}.${timestamp}.`, delivery.body)))) {
    return refuse("bad_signature", "No v1 signature in webhook-signature matches the body and the secret.");
  }
  return { ok: true };
}
