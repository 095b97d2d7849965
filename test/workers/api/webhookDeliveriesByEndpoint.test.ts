import { describe, expect, it } from "vitest";
import { webhookDeliveryLine } from "#src/contracts/webhookDeliveryLine.ts";
import type { LogEntry } from "#src/workers/api/projectLogs/logEntry.ts";
import { DELIVERIES_SHOWN, webhookDeliveriesByEndpoint } from "#src/workers/api/webhookDeliveriesByEndpoint.ts";

const STRIPE = { name: "stripe-orders", verify: "stripe", secret: "STRIPE_WEBHOOK_SECRET", start: "fulfil" };
const PUSHES = { name: "pushes", verify: "github", secret: "GITHUB_SECRET" };
const T0 = Date.UTC(2026, 10, 29, 1, 0, 0);
let seq = 0;
const line = (at: number, message: string): LogEntry => ({ seq: ++seq, at, kind: "console", level: "log", message });

describe("webhookDeliveriesByEndpoint", () => {
  it("finds each endpoint's deliveries in the log, newest first, and skips every other line", () => {
    const entries: LogEntry[] = [
      line(
        T0,
        webhookDeliveryLine({
          webhook: "stripe-orders",
          delivery: "evt_1",
          verified: true,
          runId: "r1",
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
          runId: "r1",
          started: false,
        }),
      ),
      line(
        T0 + 2000,
        webhookDeliveryLine({ webhook: "stripe-orders", delivery: null, verified: false, refused: "stale" }),
      ),
      line(T0 + 3000, "an ordinary console line"),
      {
        seq: ++seq,
        at: T0 + 4000,
        kind: "exception",
        name: "Error",
        message: webhookDeliveryLine({ webhook: "pushes", delivery: "x", verified: true }),
      },
    ];
    const [stripe, pushes] = webhookDeliveriesByEndpoint([STRIPE, PUSHES], entries);
    expect(stripe).toMatchObject(STRIPE);
    expect(stripe!.deliveries.map((d) => [d.at - T0, d.delivery, d.verified, d.refused, d.started])).toEqual([
      [2000, null, false, "stale", undefined],
      [1000, "evt_1", true, undefined, false],
      [0, "evt_1", true, undefined, true],
    ]);
    expect(pushes!.deliveries).toEqual([]);
  });

  it(`keeps the newest ${DELIVERIES_SHOWN} of an endpoint`, () => {
    const many = Array.from({ length: 8 }, (_, i) =>
      line(T0 + i, webhookDeliveryLine({ webhook: "pushes", delivery: `d-${i}`, verified: true })),
    );
    const [row] = webhookDeliveriesByEndpoint([PUSHES], many);
    expect(row!.deliveries.map((d) => d.delivery)).toEqual(["d-7", "d-6", "d-5", "d-4", "d-3"]);
  });
});
