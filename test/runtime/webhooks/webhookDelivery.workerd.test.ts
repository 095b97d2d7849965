/**
 * Webhook deliveries through a project worker's entry in workerd, on the Durable Object backend:
 * the verifiers on workerd's WebCrypto, the delivery id as the run actor's idempotency key, and
 * the answer given while the run is still going (it waits for an event no one sends).
 */
import { createExecutionContext, env } from "cloudflare:test";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseWebhookDeliveryLine } from "#src/contracts/webhookDeliveryLine.ts";
import { webhook, workflow } from "#src/runtime/index.ts";
import { createPlatformWorker } from "#src/runtime/entry/createPlatformWorker.ts";
import type { PlatformEnv } from "#src/runtime/entry/platformEnv.ts";
import { webhookHost } from "#src/runtime/webhooks/webhookDelivery.ts";

const SECRET = "whsec_workerd_test_secret";
const NOW_S = 1_780_000_000;
const ORIGIN = "https://shop.example.test";

workflow("fulfil-order", {
  start: async () => ({ step: "shipped", waitFor: "shipped" }),
  shipped: async (ctx) => ({ done: true, result: ctx.event }),
});
webhook("stripe-orders", { verify: "stripe", secret: "STRIPE_WEBHOOK_SECRET", start: "fulfil-order" });

const worker = createPlatformWorker({ fetch: () => new Response("the project's own answer") });
const projectEnv = {
  ...env,
  PLATFORM_WORKER_SECRET: "ab".repeat(32),
  PLATFORM_PROJECT_ID: "7",
  STRIPE_WEBHOOK_SECRET: SECRET,
} as unknown as PlatformEnv;
const stripe = new Stripe("sk_test_unused");

let saved = webhookHost.clock;
beforeAll(() => {
  saved = webhookHost.clock;
  webhookHost.clock = () => NOW_S * 1000;
});
afterAll(() => {
  webhookHost.clock = saved;
});

async function deliver(eventId: string, options: { tamper?: boolean; timestamp?: number } = {}) {
  const body = JSON.stringify({ id: eventId, type: "checkout.session.completed" });
  const signature = await stripe.webhooks.generateTestHeaderStringAsync({
    payload: body,
    secret: SECRET,
    timestamp: options.timestamp ?? NOW_S,
  });
  const request = new Request(`${ORIGIN}/__platform/webhooks/stripe-orders`, {
    method: "POST",
    headers: { "stripe-signature": signature, "content-type": "application/json" },
    body: options.tamper ? body.replace("checkout", "invoice") : body,
  });
  return worker.fetch!(request as Request<unknown, IncomingRequestCfProperties>, projectEnv, createExecutionContext());
}

describe("webhook deliveries in workerd (Durable Object backend)", () => {
  it("a Stripe-signed delivery starts one run, answered while it runs; the redelivery answers the same run", async () => {
    const first = await deliver("evt_workerd_1");
    expect(first.status).toBe(200);
    const answer = (await first.json()) as { delivery: string; runId: string; created: boolean };
    expect(answer).toMatchObject({ delivery: "evt_workerd_1", created: true });
    const view = await workflow.get(answer.runId);
    expect(view?.status).toBe("running");
    expect(view?.name).toBe("fulfil-order");

    const again = await deliver("evt_workerd_1");
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ delivery: "evt_workerd_1", runId: answer.runId, created: false });
  });

  it("records each delivery in the project's log: verified and the run, or refused and why", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    try {
      const started = (await (await deliver("evt_workerd_logged")).json()) as { runId: string };
      await deliver("evt_workerd_logged");
      await deliver("evt_workerd_logged_stale", { timestamp: NOW_S - 600 });
      const records = log.mock.calls.map((args) => parseWebhookDeliveryLine(String(args[0]))).filter(Boolean);
      expect(records).toEqual([
        {
          webhook: "stripe-orders",
          delivery: "evt_workerd_logged",
          verified: true,
          runId: started.runId,
          started: true,
        },
        {
          webhook: "stripe-orders",
          delivery: "evt_workerd_logged",
          verified: true,
          runId: started.runId,
          started: false,
        },
        { webhook: "stripe-orders", delivery: null, verified: false, refused: "stale" },
      ]);
    } finally {
      log.mockRestore();
    }
  });

  it.each([
    { name: "a tampered body", eventId: "evt_workerd_tampered", options: { tamper: true } },
    { name: "a timestamp 10 minutes old", eventId: "evt_workerd_stale", options: { timestamp: NOW_S - 600 } },
  ])("$name answers 401 and starts nothing (the same event, signed, then starts one)", async ({ eventId, options }) => {
    const count = async () => (await workflow.list({ name: "fulfil-order", limit: 100 })).runs.length;
    const before = await count();
    const response = await deliver(eventId, options);
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
    expect(await count()).toBe(before);
    const signed = await deliver(eventId);
    expect(((await signed.json()) as { created: boolean }).created).toBe(true);
    expect(await count()).toBe(before + 1);
  });
});
