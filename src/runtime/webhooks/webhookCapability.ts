import type { PlatformRuntime } from "../entry/platformRuntime.ts";
import { handleWebhookDelivery } from "./webhookDelivery.ts";
import { forgetWebhooks, webhookMetadata } from "./webhookEndpoints.ts";

/**
 * The webhook capability plugged into `runtime`: `POST /__platform/webhooks/<name>` on the
 * project's origin, the endpoints in the build metadata (what `platform webhook list` shows) and
 * forgetting them. Called once, by `src/runtime/webhooks/index.ts` where it declares `webhook`,
 * so only a project that imports `webhook` carries any of it.
 */
export function installWebhookCapability(runtime: PlatformRuntime): void {
  runtime.registerPublicRoute(handleWebhookDelivery);
  runtime.registerMetadata("webhooks", webhookMetadata);
  runtime.onForget(forgetWebhooks);
}
