import { afterEach, describe, expect, it } from "vitest";
import { PlatformRuntime } from "#src/runtime/entry/platformRuntime.ts";
import { installWebhookCapability } from "#src/runtime/webhooks/webhookCapability.ts";
import { handleWebhookDelivery } from "#src/runtime/webhooks/webhookDelivery.ts";
import { registerWebhook } from "#src/runtime/webhooks/webhookEndpoints.ts";

// The capability is one named call on a runtime, so a test can plug it into a fresh one.
let runtime = new PlatformRuntime();
afterEach(() => {
  runtime.forgetRegistrations();
  runtime = new PlatformRuntime();
});

describe("installWebhookCapability(runtime)", () => {
  it("serves deliveries before user code and records no endpoint until one is registered", () => {
    installWebhookCapability(runtime);
    expect(runtime.publicRoutes).toEqual([handleWebhookDelivery]);
    expect(runtime.metadata()).toEqual({ crons: [], webhooks: [] });
  });

  it("records each registered endpoint in the build metadata, and forgets them with the runtime's registrations", () => {
    installWebhookCapability(runtime);
    registerWebhook("orders", { verify: "stripe", secret: "STRIPE_WEBHOOK_SECRET", start: "fulfil" });
    expect(runtime.metadata().webhooks).toEqual([
      {
        name: "orders",
        path: "/__platform/webhooks/orders",
        verify: "stripe",
        secret: "STRIPE_WEBHOOK_SECRET",
        start: "fulfil",
      },
    ]);

    runtime.forgetRegistrations();
    expect(runtime.metadata().webhooks).toEqual([]);
    expect(() => registerWebhook("orders", { verify: "github", secret: "S", start: "w" })).not.toThrow();
  });

  it("installing it twice serves each delivery once", () => {
    installWebhookCapability(runtime);
    installWebhookCapability(runtime);
    expect(runtime.publicRoutes).toEqual([handleWebhookDelivery]);
  });
});
