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
  /**
   * The provider's endpoint check, answered by the platform (verified like any delivery, never
   * handed to the project): what to answer, or null for an ordinary delivery.
   */
  handshake?(payload: unknown): WebhookHandshake | null;
}

/** The answer to a provider's endpoint check: a status and an optional JSON body. */
export interface WebhookHandshake {
  status: number;
  json?: unknown;
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
    // Events API's URL check: echo the challenge.
    handshake: (p) =>
      field(p, "type") === "url_verification" ? { status: 200, json: { challenge: field(p, "challenge") } } : null,
  },
  // An interaction's id (webhook events carry theirs in `event`).
  discord: {
    verify: verifyDiscordSignature,
    deliveryId: (_h, p) => field(p, "id"),
    idHeaders: ["x-signature-timestamp"],
    // Interactions endpoint PING (type 1) wants a PONG; a webhook events PING (type 0) wants 204.
    handshake: (p) => {
      const type = typeof p === "object" && p !== null ? (p as Record<string, unknown>).type : undefined;
      if (type === 1) return { status: 200, json: { type: 1 } };
      if (type === 0) return { status: 204 };
      return null;
    },
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
