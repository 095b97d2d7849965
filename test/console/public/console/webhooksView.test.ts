import { describe, expect, it } from "vitest";
import { deliveryOutcome } from "#src/console/public/console/webhooksView.js";

describe("the console's webhook deliveries", () => {
  it.each([
    ["a delivery that started its run", { verified: true, runId: "r", started: true }, "verified, started the run"],
    [
      "a redelivery answered with the run",
      { verified: true, runId: "r", started: false },
      "verified, run already started (redelivery)",
    ],
    ["a verified one a route sent nowhere", { verified: true }, "verified, nothing started"],
    ["a refused one, with why", { verified: false, refused: "bad_signature" }, "refused: bad_signature"],
    ["a refused one without a reason", { verified: false }, "refused: unverified"],
  ])("says what became of %s", (_name, delivery, text) => {
    expect(deliveryOutcome({ at: 0, delivery: "evt_1", ...delivery })).toBe(text);
  });
});
