import { describe, expect, it } from "vitest";
import { webhookDeliveryLine } from "../../../../src/contracts/webhookDeliveryLine.ts";
import { formatWebhookList } from "../../../../src/dev/cli/webhook/webhookList.ts";
import type { LogEntry } from "../../../../src/workers/api/projectLogs/logEntry.ts";
import { webhookDeliveriesByEndpoint } from "../../../../src/workers/api/webhookDeliveriesByEndpoint.ts";

const STRIPE = {
  name: "stripe-orders",
  url: "https://shop.example.app/__platform/webhooks/stripe-orders",
  verify: "stripe",
  secret: "STRIPE_WEBHOOK_SECRET",
  start: "fulfil",
};
const PUSHES = {
  name: "pushes",
  url: "https://shop.example.app/__platform/webhooks/pushes",
  verify: "github",
  secret: "GITHUB_SECRET",
};
const T0 = Date.UTC(2026, 10, 29, 1, 0, 0);
let seq = 0;
const line = (at: number, message: string): LogEntry => ({ seq: ++seq, at, kind: "console", level: "log", message });

const ENTRIES: LogEntry[] = [
  line(
    T0,
    webhookDeliveryLine({
      webhook: "stripe-orders",
      delivery: "evt_1",
      verified: true,
      runId: "3f2a9c1d77",
      started: true,
    }),
  ),
  {
    seq: ++seq,
    at: T0 + 500,
    kind: "request",
    method: "POST",
    path: "/__platform/webhooks/stripe-orders",
    status: 200,
    ms: 4,
  },
  line(
    T0 + 1000,
    webhookDeliveryLine({
      webhook: "stripe-orders",
      delivery: "evt_1",
      verified: true,
      runId: "3f2a9c1d77",
      started: false,
    }),
  ),
  line(T0 + 2000, webhookDeliveryLine({ webhook: "stripe-orders", delivery: null, verified: false, refused: "stale" })),
  line(T0 + 3000, "an ordinary console line"),
];

describe("platform webhook list", () => {
  it("prints URL, scheme, secret name, what it starts and each delivery's outcome", () => {
    const text = formatWebhookList(webhookDeliveriesByEndpoint([STRIPE, PUSHES], ENTRIES));
    expect(text).toBe(
      [
        "stripe-orders  https://shop.example.app/__platform/webhooks/stripe-orders",
        "  verify stripe, secret STRIPE_WEBHOOK_SECRET, starts fulfil",
        "  time                  delivery id  outcome",
        "  2026-11-29T01:00:02Z  -            refused: stale",
        "  2026-11-29T01:00:01Z  evt_1        verified, run 3f2a9c1d (already started: redelivery)",
        "  2026-11-29T01:00:00Z  evt_1        verified, started run 3f2a9c1d",
        "",
        "pushes  https://shop.example.app/__platform/webhooks/pushes",
        "  verify github, secret GITHUB_SECRET, route decides",
        "  no deliveries in the project's recent log",
        "",
      ].join("\n"),
    );
  });

  it("prints a delivery id's control characters inert", () => {
    const entries = [line(T0, webhookDeliveryLine({ webhook: "pushes", delivery: "x\u001b[2Jy", verified: true }))];
    const text = formatWebhookList(webhookDeliveriesByEndpoint([PUSHES], entries));
    expect(text).not.toContain("\u001b");
    expect(text).toContain("x\\x1b[2Jy");
  });

  it("says how to register one when there are none", () => {
    expect(formatWebhookList([])).toMatch(/no webhook endpoints: register one with webhook\(/);
  });
});
