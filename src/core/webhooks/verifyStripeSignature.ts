import { fromHex } from "../crypto/encoding.ts";
import { anyHmacMatches, hmacKey, joinBytes } from "./hmacSha256.ts";
import { refuse, type SignedDelivery, timestampFresh, type WebhookCheck } from "./webhookCheck.ts";

/**
 * Stripe: `Stripe-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…]`, each
 * `v1` an HMAC-SHA256 of `<t>.<raw body>` keyed with the endpoint's signing
 * secret (`whsec_…`, used as its UTF-8 bytes). Several `v1` appear while a
 * secret is being rolled; one matching is enough. Other schemes (`v0`) are
 * ignored, as Stripe's own libraries do. Tolerance: 300 s.
 */
export const STRIPE_TOLERANCE_SECONDS = 300;

export async function verifyStripeSignature(secret: string, delivery: SignedDelivery): Promise<WebhookCheck> {
  const header = delivery.headers.get("stripe-signature");
  if (!header) return refuse("missing", "The request has no Stripe-Signature header.");
  let timestamp: string | undefined;
  const candidates: Uint8Array<ArrayBuffer>[] = [];
  for (const item of header.split(",")) {
    const [name, value = ""] = item.trim().split("=", 2) as [string, string?];
    if (name === "t") timestamp = value;
    if (name === "v1") {
      const bytes = value.length === 64 ? fromHex(value) : null;
      if (bytes) candidates.push(bytes);
    }
  }
  if (!timestamp || !/^\d{1,12}$/.test(timestamp) || candidates.length === 0) {
    return refuse("malformed", "Stripe-Signature must hold t=<unix seconds> and at least one v1=<64 hex>.");
  }
  if (!timestampFresh(Number(timestamp), delivery.nowMS, STRIPE_TOLERANCE_SECONDS)) {
    return refuse("stale", `The Stripe-Signature timestamp is more than ${STRIPE_TOLERANCE_SECONDS} s from now.`);
  }
  const key = await hmacKey(secret);
  if (!(await anyHmacMatches(key, candidates, joinBytes(`${timestamp}.`, delivery.body)))) {
    return refuse("bad_signature", "No v1 signature in Stripe-Signature matches the body and the secret.");
  }
  return { ok: true };
}
