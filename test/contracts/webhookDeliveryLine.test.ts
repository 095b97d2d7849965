import { describe, expect, it } from "vitest";
import { parseWebhookDeliveryLine, webhookDeliveryLine } from "../../src/contracts/webhookDeliveryLine.ts";

describe("webhook delivery log lines", () => {
  it.each([
    { webhook: "stripe-orders", delivery: "evt_1", verified: true, runId: "r1", started: true },
    { webhook: "stripe-orders", delivery: null, verified: false, refused: "stale" },
    { webhook: "pushes", delivery: "d-1", verified: true },
  ])("round-trips %o", (record) => {
    expect(parseWebhookDeliveryLine(webhookDeliveryLine(record))).toEqual(record);
  });

  it.each([
    "GET / → 200 in 3 ms",
    "webhook delivery not json",
    'webhook delivery {"webhook":1,"verified":true,"delivery":null}',
    'webhook delivery {"webhook":"a","verified":"yes","delivery":null}',
    'webhook delivery {"webhook":"a","verified":true,"delivery":7}',
  ])("is null for another line: %s", (line) => {
    expect(parseWebhookDeliveryLine(line)).toBeNull();
  });
});
