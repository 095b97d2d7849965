import { verifyEd25519Webhook } from "../crypto/ed25519.ts";
import { refuse, type SignedDelivery, type WebhookCheck } from "./webhookCheck.ts";

/**
 * Discord: Ed25519 over `X-Signature-Timestamp` + the raw body, checked with
 * the application's public key (the "secret" here is that hex key, which is
 * not secret). The platform's one Ed25519 verification does the work
 * (5 min window included).
 */
export async function verifyDiscordSignature(publicKeyHex: string, delivery: SignedDelivery): Promise<WebhookCheck> {
  const check = await verifyEd25519Webhook(
    publicKeyHex,
    {
      signatureHex: delivery.headers.get("x-signature-ed25519"),
      timestamp: delivery.headers.get("x-signature-timestamp"),
      rawBody: delivery.body,
    },
    { nowMS: delivery.nowMS },
  );
  if (check.ok) return check;
  return refuse(check.reason === "bad_key" ? "bad_secret" : check.reason, check.message);
}
