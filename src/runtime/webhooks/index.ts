import { platformRuntime } from "../entry/platformRuntime.ts";
import { installWebhookCapability } from "./webhookCapability.ts";
import { registerWebhook, type WebhookOptions } from "./webhookEndpoints.ts";

/**
 * The webhook capability: evaluated only when user code imports `webhook`
 * from `platform`. It serves `POST /__platform/webhooks/<name>` on the
 * project's origin and records the endpoints in the build metadata (what
 * `platform webhook list` shows).
 */
installWebhookCapability(platformRuntime);

/**
 * Registers a verified webhook trigger at top level: `POST /__platform/webhooks/<name>`.
 * @example
 * webhook("stripe", { verify: "stripe", secret: "STRIPE_WEBHOOK_SECRET", start: "fulfil" });
 */
export function webhook(name: string, options: WebhookOptions): { name: string; path: string } {
  const endpoint = registerWebhook(name, options);
  return { name: endpoint.name, path: `/__platform/webhooks/${endpoint.name}` };
}

export type { WebhookDecision, WebhookOptions, WebhookRouter } from "./webhookEndpoints.ts";
