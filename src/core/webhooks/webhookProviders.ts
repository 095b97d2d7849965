import { verifyDiscordSignature } from "./verifyDiscordSignature.ts";
import { verifyGithubSignature } from "./verifyGithubSignature.ts";
import { verifySlackSignature } from "./verifySlackSignature.ts";
import { verifyStandardSignature } from "./verifyStandardSignature.ts";
import { verifyStripeSignature } from "./verifyStripeSignature.ts";
import type { SignedDelivery, WebhookCheck } from "./webhookCheck.ts";

/**
 * The signing schemes `webhook(name, { verify })` accepts, each with its
 * verifier, where its delivery id lives (the idempotency key: a provider
 * redelivers with the same id), and which of its headers identify a delivery
 * (handed to the workflow as `headers`).
 */
export interface WebhookProvider {
  verify(secret: string, delivery: SignedDelivery): Promise<WebhookCheck>;
  /** The provider's id of this delivery, or null when it carries none. */
  deliveryId(headers: Headers, payload: unknown): string | null;
  idHeaders: readonly string[];
}

function field(payload: unknown, name: string): string | null {
  if (typeof payload !== "object" || payload === null) return null;
  const value = (payload as Record<string, unknown>)[name];
  return typeof value === "string" && value !== "" ? value : null;
}

export const WEBHOOK_PROVIDERS = {
  // Stripe's event id (`evt_…`) is the same on every retry of an event.
  stripe: { verify: verifyStripeSignature, deliveryId: (_h, p) => field(p, "id"), idHeaders: [] },
  github: {
    verify: verifyGithubSignature,
    deliveryId: (h) => h.get("x-github-delivery"),
    idHeaders: ["x-github-delivery", "x-github-event", "x-github-hook-id"],
  },
  standard: {
    verify: verifyStandardSignature,
    deliveryId: (h) => h.get("webhook-id"),
    idHeaders: ["webhook-id", "webhook-timestamp"],
  },
  // Events API deliveries carry `event_id` (kept across Slack's retries); other payloads have no id.
  slack: {
    verify: verifySlackSignature,
    deliveryId: (_h, p) => field(p, "event_id"),
    idHeaders: ["x-slack-request-timestamp", "x-slack-retry-num", "x-slack-retry-reason"],
  },
  // An interaction's id.
  discord: {
    verify: verifyDiscordSignature,
    deliveryId: (_h, p) => field(p, "id"),
    idHeaders: ["x-signature-timestamp"],
  },
} satisfies Record<string, WebhookProvider>;

export type WebhookVerifyScheme = keyof typeof WEBHOOK_PROVIDERS;

export function isWebhookVerifyScheme(value: unknown): value is WebhookVerifyScheme {
  return typeof value === "string" && Object.hasOwn(WEBHOOK_PROVIDERS, value);
}

/** The provider's id headers present on a delivery, lowercase names. */
export function idHeadersOf(provider: WebhookProvider, headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of provider.idHeaders) {
    const value = headers.get(name);
    if (value !== null) out[name] = value;
  }
  return out;
}
