// The demo project's own test of its `checkout` workflow, run by the repository's `npm test`.
// `platform/testing` runs the workflow in this process with a virtual clock: the retry's
// backoff passes at once but the events record it.
import { describe, expect, it } from "vitest";
import { testWorkflow } from "platform/testing";
import "../src/index.ts";

describe("checkout", () => {
  it("charges and ships an item", async () => {
    const run = await testWorkflow("checkout", { item: "coffee beans" });
    await expect(run.result()).resolves.toEqual({ shipped: "coffee beans", chargedOnAttempt: 1 });
  });

  it("retries a failed payment after the backoff, and ships on the second attempt", async () => {
    const run = await testWorkflow("checkout", { item: "tea", flaky: true });
    await expect(run.result()).resolves.toEqual({ shipped: "tea", chargedOnAttempt: 2 });
    const [failed] = run.view.events.filter((e) => e.type === "step_failed");
    const retried = run.view.events.find((e) => e.type === "step_started" && e.payload.attempt === 2);
    expect(failed?.payload).toMatchObject({ step: "start", attempt: 1, retryable: true });
    // backoff.initialMS is 500 with ±20 % jitter.
    expect(retried!.at - failed!.at).toBeGreaterThanOrEqual(400);
  });

  it("fails at once without an item", async () => {
    const run = await testWorkflow("checkout", {});
    await expect(run.result()).rejects.toMatchObject({ code: "workflow_failed", message: "item is required" });
  });
});
