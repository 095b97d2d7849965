/**
 * Retry rules and typos, every backend: `nonRetryableErrors` fails a run at once by the error's
 * name, `stepOptions` gives one step its own attempts, backoff and timeout, and a step's return
 * with a key the engine does not know fails the run at once, naming the key.
 */
import { describe, expect, it } from "vitest";
import { workflow } from "#src/engine/api/workflowApi.ts";
import { FAILED_AT_ONCE_LOG, rejection, shape } from "#test/support/workflow/index.ts";
import { type MakeWorkflowBackend, pollingGates, useBackendUnderTest, viewOf } from "./workflowConformance.fixture.ts";

class CardDeclinedError extends Error {
  override name = "CardDeclinedError";
}

const QUICK_RETRY = { initialMS: 1, maxMS: 1, jitter: 0 };

/** `step_started` then `step_failed(…,retryable)` for attempts 1..n-1 and `step_failed(…,final)` for n. */
function attempts(step: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => [
    `step_started(${step},${i + 1})`,
    `step_failed(${step},${i + 1},${i + 1 < n ? "retryable" : "final"})`,
  ]).flat();
}

export function describeRetryRulesConformance(name: string, makeBackend: MakeWorkflowBackend): void {
  describe(`workflow conformance, retry rules and typos: ${name}`, () => {
    useBackendUnderTest(makeBackend, pollingGates(), () => {
      workflow(
        "charge-card",
        {
          start: async (ctx) => {
            if (ctx.data.decline) throw new CardDeclinedError("card declined");
            if (ctx.attempt === 1) throw new Error("gateway busy");
            return { done: true, result: ctx.attempt };
          },
        },
        { maxAttempts: 3, backoff: QUICK_RETRY, nonRetryableErrors: ["CardDeclinedError"] },
      );
      workflow(
        "per-step",
        {
          start: async () => ({ step: "charge" }),
          charge: async (ctx) => {
            if (ctx.data.chargeFails) throw new Error("charge failed");
            return { step: "ship" };
          },
          ship: async () => {
            throw new Error("ship failed");
          },
        },
        { maxAttempts: 2, backoff: QUICK_RETRY, stepOptions: { charge: { maxAttempts: 5 } } },
      );
      workflow(
        "slow-step",
        {
          start: async () => ({ step: "slow" }),
          slow: async () => {
            await new Promise((resolve) => setTimeout(resolve, 2_000));
            return { done: true };
          },
        },
        { stepOptions: { slow: { stepTimeoutMS: 20, maxAttempts: 1 } } },
      );
      workflow("typo", {
        start: async (ctx) => (ctx.data.done ? { done: true, result: 1, reslt: 2 } : { step: "later", sleepMs: 10 }),
        later: async () => ({ done: true }),
      });
    });

    it("an error named in nonRetryableErrors fails the run after one attempt", async () => {
      const run = await workflow.start("charge-card", { decline: true });
      const error = await rejection(run.result());
      expect(error.message).toBe("card declined");
      const view = await viewOf(run.id);
      expect(shape(view.events)).toEqual(FAILED_AT_ONCE_LOG);
      expect(view.events.at(-1)?.payload).toEqual({ reason: "card declined", cause: "non_retryable" });
    });

    it("any other error is still retried", async () => {
      const run = await workflow.start("charge-card", { decline: false });
      await expect(run.result()).resolves.toBe(2);
    });

    it("stepOptions.charge.maxAttempts: 5 gives charge 5 attempts while the workflow's default is 2", async () => {
      const run = await workflow.start("per-step", { chargeFails: true });
      expect((await rejection(run.result())).message).toBe("charge failed");
      const view = await viewOf(run.id);
      expect(shape(view.events)).toEqual([
        "workflow_created",
        "step_started(start,1)",
        "step_completed(start->charge)",
        ...attempts("charge", 5),
        "workflow_failed",
      ]);
      expect(view.events.at(-1)?.payload).toEqual({ reason: "charge failed", cause: "attempts_exhausted" });
    });

    it("a step with no stepOptions entry keeps the workflow's maxAttempts", async () => {
      const run = await workflow.start("per-step", { chargeFails: false });
      expect((await rejection(run.result())).message).toBe("ship failed");
      const view = await viewOf(run.id);
      expect(shape(view.events).slice(-5)).toEqual([...attempts("ship", 2), "workflow_failed"]);
    });

    it("stepOptions.slow.stepTimeoutMS times that step out", async () => {
      const run = await workflow.start("slow-step");
      expect((await rejection(run.result())).message).toBe("timeout");
      const view = await viewOf(run.id);
      expect(shape(view.events, { reasons: true }).slice(-2)).toEqual([
        "step_failed(slow,1,timeout,final)",
        "workflow_failed",
      ]);
    });

    it.each([
      [
        "a misspelt sleepMS",
        { done: false },
        'Step "start" of workflow "typo": a return { step } has no "sleepMs" (did you mean "sleepMS"?); it takes step, sleepMS, until, waitFor, waitForRun, timeoutMS, children, done',
      ],
      [
        "a misspelt result",
        { done: true },
        'Step "start" of workflow "typo": a return { done: true } has no "reslt" (did you mean "result"?); it takes done, result',
      ],
    ])("a return with %s fails the run at once, naming the key", async (_, data, message) => {
      const run = await workflow.start("typo", data);
      expect((await rejection(run.result())).message).toBe(message);
      const view = await viewOf(run.id);
      expect(shape(view.events)).toEqual(FAILED_AT_ONCE_LOG);
    });
  });
}
