/**
 * executeRun beyond the spec, on an injected clock (no real waiting): sleeps, waits for an event
 * with and without a timeout, retry-after, and a cancel while a step runs.
 */
import { describe, expect, it, vi } from "vitest";
import { PlatformError } from "#src/core/errors.ts";
import { RetryAfterError } from "#src/engine/execution/retryAfterError.ts";
import { appendReceivedEvent, cancelRun } from "#src/engine/control/runControl.ts";
import { gate, PROGRESS, PROGRESS_TEST_TIMEOUT_MS, shape } from "#test/support/workflow/index.ts";
import { RUN, setup } from "./executeRun.fixture.ts";

vi.setConfig({ testTimeout: PROGRESS_TEST_TIMEOUT_MS });

describe("executeRun beyond the spec: sleeps, waits, retry-after, cancel (injected clock, no real waiting)", () => {
  it("a sleep: step_completed records wake_at; the executor answers waiting until then, then claims the next step", async () => {
    const { run, events, clock } = setup({
      start: async () => ({ step: "finish", sleepMS: 86_400_000 }),
      finish: async () => ({ done: true, result: "awake" }),
    });
    const t0 = clock.now();
    expect(await run()).toEqual({ status: "waiting", wakeAt: t0 + 86_400_000 });
    expect(events()[2]?.payload).toEqual({ step: "start", writes: {}, next_step: "finish", wake_at: t0 + 86_400_000 });
    clock.advance(86_399_999);
    expect(await run()).toEqual({ status: "waiting", wakeAt: t0 + 86_400_000 });
    clock.advance(1);
    expect(await run()).toEqual({ status: "terminal" });
    expect(events()[3]).toMatchObject({ type: "step_started", at: t0 + 86_400_000 });
  });

  const invalid: [string, object][] = [
    ["sleepMS over a year", { step: "finish", sleepMS: 365 * 86_400_000 + 1 }],
    ["negative sleepMS", { step: "finish", sleepMS: -1 }],
    ["until over a year away", { step: "finish", until: Date.UTC(2100, 0) }],
    ["until not a number", { step: "finish", until: "tomorrow" }],
    ["sleep and wait together", { step: "finish", sleepMS: 1, waitFor: "x" }],
    ["timeoutMS without waitFor", { step: "finish", timeoutMS: 1 }],
    ["an empty event name", { step: "finish", waitFor: "" }],
    ["timeoutMS over a year", { step: "finish", waitFor: "x", timeoutMS: 365 * 86_400_000 + 1 }],
  ];
  for (const [what, returned] of invalid) {
    it(`${what}: the step fails without retry (invalid_input)`, async () => {
      const { run, events } = setup({
        start: async () => returned as never,
        finish: async () => ({ done: true }),
      });
      expect(await run()).toEqual({ status: "terminal" });
      expect(shape(events()).slice(2)).toEqual(["step_failed(start,1,final)", "workflow_failed"]);
    });
  }

  it("a wait without timeout answers idle; once the event is in the log the next step runs with it, on every attempt", async () => {
    const seen: unknown[] = [];
    const { run, events, store, last, clock } = setup({
      start: async () => ({ step: "approved", waitFor: "approval" }),
      approved: async (ctx) => {
        seen.push(ctx.event);
        if (ctx.attempt === 1) throw new Error("flaky");
        return { done: true, result: ctx.event };
      },
    });
    expect(await run()).toEqual({ status: "idle" });
    appendReceivedEvent(store, RUN, { name: "approval", payload: { by: "ada" } }, clock.now());
    expect(await run()).toEqual({ status: "waiting", wakeAt: clock.now() + 1000 });
    clock.advance(1000);
    expect(await run()).toEqual({ status: "terminal" });
    expect(seen).toEqual([
      { name: "approval", payload: { by: "ada" } },
      { name: "approval", payload: { by: "ada" } },
    ]);
    expect(
      events()
        .filter((e) => e.type === "step_started")
        .map((e) => e.payload),
    ).toEqual([
      { step: "start", attempt: 1 },
      { step: "approved", attempt: 1, event_seq: 4 },
      { step: "approved", attempt: 2, event_seq: 4 },
    ]);
    expect(last().payload).toEqual({ result: { name: "approval", payload: { by: "ada" } } });
  });

  it("a wait with a timeout: waiting until timeout_at, then the next step runs with ctx.event null", async () => {
    const { run, clock, last } = setup({
      start: async () => ({ step: "next", waitFor: "approval", timeoutMS: 5000 }),
      next: async (ctx) => ({ done: true, result: ctx.event }),
    });
    const t0 = clock.now();
    expect(await run()).toEqual({ status: "waiting", wakeAt: t0 + 5000 });
    clock.advance(5000);
    expect(await run()).toEqual({ status: "terminal" });
    expect(last().payload).toEqual({ result: null });
  });

  it("RetryAfterError and rate_limited: step_failed records retry_at, the executor waits for it instead of the backoff", async () => {
    for (const thrown of [
      new RetryAfterError("busy", 55_000),
      new PlatformError("rate_limited", "slow down", { retryAfterSeconds: 55 }),
    ]) {
      const { run, events, clock } = setup(
        {
          start: async (ctx) => {
            if (ctx.attempt === 1) throw thrown;
            return { done: true };
          },
        },
        { backoff: { initialMS: 500, jitter: 0 } },
      );
      const t0 = clock.now();
      expect(await run()).toEqual({ status: "waiting", wakeAt: t0 + 55_000 });
      expect(events()[2]?.payload).toEqual({
        step: "start",
        attempt: 1,
        reason: thrown.message,
        retryable: true,
        retry_at: t0 + 55_000,
        error: expect.objectContaining({ name: thrown.name, message: thrown.message }),
      });
      clock.advance(54_999);
      expect(await run()).toEqual({ status: "waiting", wakeAt: t0 + 55_000 });
      clock.advance(1);
      expect(await run()).toEqual({ status: "terminal" });
    }
  });

  it("cancel while a step runs: the step's commit finds the terminal event and is dropped", async () => {
    const hold = gate();
    const { run, events, store, clock } = setup({
      start: async (ctx) => {
        await hold.promise;
        ctx.write("late", true);
        return { step: "start" };
      },
    });
    const running = run();
    await vi.waitFor(() => expect(events().at(-1)?.type).toBe("step_started"), PROGRESS);
    cancelRun(store, { runId: RUN, reason: "stop", now: clock.now() });
    hold.open();
    expect(await running).toEqual({ status: "terminal" });
    expect(shape(events())).toEqual(["workflow_created", "step_started(start,1)", "workflow_cancelled"]);
  });
});
