/**
 * executeRun's budget and the steps of other executors: it stops claiming once its budget is spent
 * or its signal aborted, answers in_flight for a step another executor holds, ignores a late result
 * whose timeout was recorded, and repairs a missing terminal event.
 */
import { describe, expect, it, vi } from "vitest";
import { retryDelayMS } from "#src/engine/execution/backoff.ts";
import {
  gate,
  manualClock,
  PROGRESS,
  PROGRESS_TEST_TIMEOUT_MS,
  RETRIED_ONCE_LOG,
  shape,
} from "#test/support/workflow/index.ts";
import { RUN, setup } from "./executeRun.fixture.ts";

vi.setConfig({ testTimeout: PROGRESS_TEST_TIMEOUT_MS });

describe("executeRun: budget, in-flight steps and stopping", () => {
  it("claims no new step once the budget is spent; the next execution continues", async () => {
    const clock = manualClock();
    // Each step takes 30 ms of manual time.
    const step = (next: string | null) => async () => {
      clock.advance(30);
      return next ? { step: next } : { done: true as const };
    };
    const { run, events } = setup({ start: step("b"), b: step("c"), c: step(null) }, {}, null, clock);
    expect(await run({ budgetMS: 50 })).toEqual({ status: "budget_exhausted" });
    expect(shape(events())).toEqual([
      "workflow_created",
      "step_started(start,1)",
      "step_completed(start->b)",
      "step_started(b,1)",
      "step_completed(b->c)",
    ]);
    expect(await run({ budgetMS: 50 })).toEqual({ status: "terminal" });
    expect(shape(events()).slice(5)).toEqual(["step_started(c,1)", "step_completed(c)", "workflow_completed"]);
  });

  it("returns in_flight while another executor holds an unexpired step, then records its timeout", async () => {
    const { run, plant, events, clock, definition } = setup(
      { start: async () => ({ done: true, result: "retried" }) },
      { stepTimeoutMS: 5000 },
    );
    plant(["step_started", { step: "start", attempt: 1 }]);
    const startedAt = clock.now();
    clock.advance(4999);
    expect(await run()).toEqual({ status: "in_flight", timeoutAt: startedAt + 5000 });
    expect(events()).toHaveLength(2);
    clock.advance(1);
    const waiting = await run();
    expect(shape(events())).toEqual(["workflow_created", "step_started(start,1)", "step_failed(start,1,retryable)"]);
    expect(events()[2]?.payload).toMatchObject({ reason: "timeout" });
    expect(waiting).toEqual({
      status: "waiting",
      wakeAt: clock.now() + retryDelayMS(definition.backoff, { runId: RUN, step: "start", attempt: 1 }),
    });
  });

  it("stops before its next claim when the signal is aborted", async () => {
    const controller = new AbortController();
    const { run, events } = setup({
      start: async () => {
        controller.abort();
        return { step: "next" };
      },
      next: async () => ({ done: true }),
    });
    expect(await run({ signal: controller.signal })).toEqual({ status: "stopped" });
    expect(shape(events())).toEqual(["workflow_created", "step_started(start,1)", "step_completed(start->next)"]);
  });

  it("ignores the late result of an attempt whose timeout another executor recorded", async () => {
    const slow = gate();
    let attempt1Done = false;
    const { run, events, clock, last } = setup(
      {
        start: async (ctx) => {
          if (ctx.attempt === 1) {
            ctx.write("from", "attempt 1");
            await slow.promise;
            attempt1Done = true;
            return { done: true, result: "late" };
          }
          return { done: true, result: "attempt 2" };
        },
      },
      // A long real timeout so only the manual clock decides; retry without backoff.
      { stepTimeoutMS: 60_000, backoff: { initialMS: 0 } },
    );
    const first = run();
    await vi.waitFor(() => expect(events()).toHaveLength(2), PROGRESS);
    clock.advance(60_000);
    // A second executor finds the step timed out, records it and runs attempt 2.
    expect(await run()).toEqual({ status: "terminal" });
    slow.open();
    // The first executor's commit finds seq 3 taken: its result is dropped.
    expect(await first).toEqual({ status: "terminal" });
    expect(attempt1Done).toBe(true);
    expect(shape(events())).toEqual(RETRIED_ONCE_LOG);
    expect(last().payload).toEqual({ result: "attempt 2" });
  });

  it("repairs a missing terminal event it finds (stuck_terminal) instead of running anything", async () => {
    const { run, plant, events } = setup({ start: async () => ({ done: true }) });
    plant(
      ["step_started", { step: "start", attempt: 1 }],
      ["step_failed", { step: "start", attempt: 1, reason: "bad", retryable: false }],
    );
    expect(await run()).toEqual({ status: "terminal" });
    expect(events().at(-1)?.payload).toEqual({ reason: "bad", cause: "non_retryable" });
  });
});
