/**
 * executeRun, the engine's step loop, on a memory store and a manual clock: the step_started rows
 * of the spec's transition table and a complete run. Its failures, budget, waits, exclusive host
 * and races are in executeRun.<aspect>.test.ts.
 */
import { describe, expect, it, vi } from "vitest";
import { retryDelayMS } from "#src/engine/execution/backoff.ts";
import { WORKFLOW_DEFAULTS, type WorkflowSteps } from "#src/engine/api/definition.ts";
import { NonRetryableError } from "#src/engine/execution/nonRetryableError.ts";
import { FAILED_AT_ONCE_LOG, shape, START_FINISH_LOG } from "#test/support/workflow/index.ts";
import { RUN, setup } from "./executeRun.fixture.ts";

describe("executeRun: the step_started rows of the transition table", () => {
  it("step returns { step: next } → step_completed with next_step", async () => {
    const { run, events } = setup({
      start: async () => ({ step: "finish" }),
      finish: async () => ({ done: true, result: 1 }),
    });
    await run();
    expect(events()[2]).toMatchObject({
      seq: 3,
      type: "step_completed",
      payload: { step: "start", writes: {}, next_step: "finish" },
    });
  });

  it("step returns { done: true, result } → step_completed and workflow_completed in one atomic append", async () => {
    const { run, store, events } = setup({ start: async () => ({ done: true, result: { ok: true } }) });
    const append = vi.spyOn(store, "append");
    expect(await run()).toEqual({ status: "terminal" });
    const batches = append.mock.calls.map(([batch]) => batch.map((e) => e.type));
    expect(batches).toContainEqual(["step_completed", "workflow_completed"]);
    expect(events().at(-1)).toMatchObject({ type: "workflow_completed", payload: { result: { ok: true } } });
  });

  it("step throws, retryable and attempts remain → step_failed alone; the retry waits for the backoff", async () => {
    const { run, events, clock, definition } = setup({
      start: async () => {
        throw new Error("flaky");
      },
    });
    const result = await run();
    expect(shape(events())).toEqual(["workflow_created", "step_started(start,1)", "step_failed(start,1,retryable)"]);
    expect(events()[2]?.payload).toEqual({
      step: "start",
      attempt: 1,
      reason: "flaky",
      retryable: true,
      error: { name: "Error", message: "flaky", stack: expect.stringMatching(/^Error: flaky\n/) },
    });
    expect(result).toEqual({
      status: "waiting",
      wakeAt: clock.now() + retryDelayMS(definition.backoff, { runId: RUN, step: "start", attempt: 1 }),
    });
  });

  it("step throws NonRetryableError → step_failed (retryable: false) and workflow_failed in one atomic append", async () => {
    const { run, store, events } = setup({
      start: async () => {
        throw new NonRetryableError("card declined");
      },
    });
    const append = vi.spyOn(store, "append");
    expect(await run()).toEqual({ status: "terminal" });
    expect(shape(events())).toEqual(FAILED_AT_ONCE_LOG);
    expect(events().at(-1)?.payload).toEqual({ reason: "card declined", cause: "non_retryable" });
    expect(append.mock.calls.map(([batch]) => batch.map((e) => e.type))).toContainEqual([
      "step_failed",
      "workflow_failed",
    ]);
  });
});

describe("executeRun: a complete run", () => {
  it("passes data, scratchpad and identity to steps and commits each step's writes", async () => {
    const seen: unknown[] = [];
    const { run, events } = setup({
      start: async (ctx) => {
        seen.push({
          step: ctx.step,
          attempt: ctx.attempt,
          runId: ctx.runId,
          workflowId: ctx.workflowId,
          data: ctx.data,
        });
        ctx.write("n", 1);
        // Own writes are not visible before the step completes.
        seen.push(ctx.scratchpad.n);
        return { step: "finish" };
      },
      finish: async (ctx) => ({ done: true, result: { hello: ctx.data.name, n: ctx.scratchpad.n } }),
    });
    expect(await run()).toEqual({ status: "terminal" });
    expect(seen).toEqual([
      { step: "start", attempt: 1, runId: RUN, workflowId: RUN, data: { name: "Ada" } },
      undefined,
    ]);
    expect(shape(events())).toEqual(START_FINISH_LOG);
    expect(events().map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(events()[2]?.payload).toEqual({ step: "start", writes: { n: 1 }, next_step: "finish" });
    expect(events()[5]?.payload).toEqual({ result: { hello: "Ada", n: 1 } });
  });

  it("a done step without result completes with null", async () => {
    const { run, last } = setup({ start: async () => ({ done: true }) });
    await run();
    expect(last().payload).toEqual({ result: null });
  });

  it("reads the log once per execution, however many steps run (O(1) store reads per step)", async () => {
    const steps: WorkflowSteps = {};
    for (let i = 0; i < 30; i++) {
      const next = i === 29 ? null : `s${i + 1}`;
      steps[i === 0 ? "start" : `s${i}`] = async (ctx) => {
        ctx.write(`k${i}`, i);
        // Every earlier write is visible: the in-memory scratchpad keeps up.
        if (i > 0 && ctx.scratchpad[`k${i - 1}`] !== i - 1) throw new Error("scratchpad behind");
        return next ? { step: next } : { done: true, result: Object.keys(ctx.scratchpad).length };
      };
    }
    const { run, store, last } = setup(steps);
    const reads = vi.spyOn(store, "events");
    const lastReads = vi.spyOn(store, "lastEvent");
    await run();
    expect(reads).toHaveBeenCalledTimes(1);
    expect(lastReads).not.toHaveBeenCalled();
    // data + k0..k28 (the last step's own write is not visible to itself).
    expect(last().payload).toEqual({ result: 30 });
  });

  it("calls beforeWaiting before each step's promise, never for steps that return without one, and sets no timer for those", async () => {
    const log: string[] = [];
    const { run } = setup({
      start: () => {
        log.push("start ran");
        return { step: "fetch" };
      },
      fetch: async () => {
        log.push("fetch ran");
        return { step: "finish" };
      },
      finish: () => {
        log.push("finish ran");
        return { done: true, result: null };
      },
    });
    const timers = vi.spyOn(globalThis, "setTimeout");
    try {
      await expect(run({ beforeWaiting: () => log.push("beforeWaiting") })).resolves.toEqual({ status: "terminal" });
      // One timer: the timeout of the one step that returned a promise.
      expect(timers.mock.calls.map((call) => call[1])).toEqual([WORKFLOW_DEFAULTS.stepTimeoutMS]);
    } finally {
      timers.mockRestore();
    }
    expect(log).toEqual(["start ran", "fetch ran", "beforeWaiting", "finish ran"]);
  });
});
