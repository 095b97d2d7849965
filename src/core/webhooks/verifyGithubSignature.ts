import { fromHex } from "../crypto/encoding.ts";
import { anyHmacMatches, hmacKey, joinBytes } from "./hmacSha256.ts";
import { refuse, type SignedDelivery, type WebhookCheck } from "./webhookCheck.ts";

/**
 * GitHub: `X-Hub-Signature-256: sha256=<hex>`, an HMAC-SHA256 of the raw body
 * keyed with the webhook's secret. GitHub signs no timestamp, so there is no
 * freshness window: a replay is caught by its `X-GitHub-Delivery` id instead.
 */
export async function verifyGithubSignature(secret: string, delivery: SignedDelivery): Promise<WebhookCheck> {
  const header = delivery.headers.get("x-hub-signature-256");
  if (!header) return refuse("missing", "The request has no X-Hub-Signature-256 header.");
  const match = /^sha256=([0-9a-fA-F]{64})$/.exec(header.trim());
  if (!match) return refuse("malformed", "X-Hub-Signature-256 must be sha256=<64 hex>.");
  const key = await hmacKey(secret);
  if (!(await anyHmacMatches(key, [fromHex(match[1]!)!], joinBytes(delivery.body)))) {
    return refuse("bad_signature", "X-Hub-Signature-256 does not match the body and the secret.");
  }
  return { ok: true };
}
