import { describe, expect, it, vi } from "vitest";
import { retryDelayMS } from "#src/engine/backoff.ts";
import { createRun } from "#src/engine/createRun.ts";
import { defineWorkflow, WORKFLOW_DEFAULTS, type WorkflowOptions, type WorkflowSteps } from "#src/engine/definition.ts";
import type { StoredEvent } from "#src/engine/events.ts";
import { executeRun, type ExecuteRunOptions } from "#src/engine/executeRun.ts";
import { MAX_EVENT_PAYLOAD_BYTES } from "#src/engine/json.ts";
import { createMemoryEventStore } from "#src/engine/memoryEventStore.ts";
import { NonRetryableError } from "#src/engine/nonRetryableError.ts";
import { RetryAfterError } from "#src/engine/retryAfterError.ts";
import { appendReceivedEvent, cancelRun } from "#src/engine/runControl.ts";
import { brandError, PlatformError } from "#src/core/errors.ts";
import { STEP_ERROR_LIMITS } from "#src/engine/stepFailure.ts";
import { gate, manualClock, shape } from "../support/node/index.ts";

const RUN = "run-1";

function setup(
  steps: WorkflowSteps,
  options: WorkflowOptions = {},
  data: unknown = { name: "Ada" },
  clock = manualClock(),
) {
  const store = createMemoryEventStore();
  const definition = defineWorkflow("w", steps, { backoff: { initialMS: 1000, jitter: 0 }, ...options });
  createRun(store, definition, data, { runId: RUN, now: clock.now() });
  const run = (extra: Partial<ExecuteRunOptions> = {}) =>
    executeRun(store, definition, RUN, { now: clock.now, sleep: async () => {}, ...extra });
  const events = () => store.events(RUN);
  const last = () => store.lastEvent(RUN) as StoredEvent;
  return { clock, store, definition, run, events, last };
}

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
    expect(shape(events())).toEqual([
      "workflow_created",
      "step_started(start,1)",
      "step_failed(start,1,final)",
      "workflow_failed",
    ]);
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
    expect(shape(events())).toEqual([
      "workflow_created",
      "step_started(start,1)",
      "step_completed(start->finish)",
      "step_started(finish,1)",
      "step_completed(finish)",
      "workflow_completed",
    ]);
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

describe("executeRun: faults", () => {
  it("plain error on attempt 1, success on attempt 2", async () => {
    const { run, events, clock } = setup({
      start: async (ctx) => {
        if (ctx.attempt === 1) throw new Error("flaky");
        return { done: true, result: ctx.attempt };
      },
    });
    const first = await run();
    expect(first.status).toBe("waiting");
    // Too early: still waiting, nothing written.
    clock.advance(999);
    expect(await run()).toEqual(first);
    expect(events()).toHaveLength(3);
    clock.advance(1);
    expect(await run()).toEqual({ status: "terminal" });
    expect(shape(events())).toEqual([
      "workflow_created",
      "step_started(start,1)",
      "step_failed(start,1,retryable)",
      "step_started(start,2)",
      "step_completed(start)",
      "workflow_completed",
    ]);
    expect(events().at(-1)?.payload).toEqual({ result: 2 });
  });

  it("exhausted attempts → the last step_failed is final and workflow_failed says attempts_exhausted", async () => {
    const { run, events, clock } = setup(
      {
        start: async (ctx) => {
          throw new Error(`down ${ctx.attempt}`);
        },
      },
      { maxAttempts: 2 },
    );
    await run();
    clock.advance(60_000);
    expect(await run()).toEqual({ status: "terminal" });
    expect(shape(events())).toEqual([
      "workflow_created",
      "step_started(start,1)",
      "step_failed(start,1,retryable)",
      "step_started(start,2)",
      "step_failed(start,2,final)",
      "workflow_failed",
    ]);
    expect(events().at(-1)?.payload).toEqual({ reason: "down 2", cause: "attempts_exhausted" });
  });

  it("timeout → step_failed with reason timeout; writes of the timed-out attempt are dropped and later writes refused", async () => {
    let lateWrite: (() => void) | undefined;
    const { run, events } = setup(
      {
        start: (ctx) => {
          ctx.write("partial", true);
          lateWrite = () => ctx.write("late", 1);
          return new Promise(() => {}); // never settles
        },
      },
      { stepTimeoutMS: 20, maxAttempts: 1 },
    );
    expect(await run()).toEqual({ status: "terminal" });
    expect(shape(events())).toEqual([
      "workflow_created",
      "step_started(start,1)",
      "step_failed(start,1,final)",
      "workflow_failed",
    ]);
    expect(events()[2]?.payload).toEqual({ step: "start", attempt: 1, reason: "timeout", retryable: false });
    expect(events()[3]?.payload).toEqual({ reason: "timeout", cause: "attempts_exhausted" });
    expect(() => lateWrite?.()).toThrow(/after attempt 1 of step "start" ended/);
  });

  it("scratchpad writes are dropped when the attempt fails", async () => {
    const seen: unknown[] = [];
    const { run, events, clock } = setup({
      start: async (ctx) => {
        seen.push(ctx.scratchpad.x);
        if (ctx.attempt === 1) {
          ctx.write("x", "from failed attempt");
          throw new Error("flaky");
        }
        ctx.write("y", "kept");
        return { done: true, result: null };
      },
    });
    await run();
    clock.advance(60_000);
    await run();
    expect(seen).toEqual([undefined, undefined]);
    expect(events()[2]?.payload).not.toHaveProperty("writes");
    expect(events()[4]?.payload).toEqual({ step: "start", writes: { y: "kept" } });
  });

  it("the scratchpad is read-only inside a step", async () => {
    const { run, last } = setup(
      {
        start: async (ctx) => {
          (ctx.scratchpad as Record<string, unknown>).x = 1;
          return { done: true };
        },
      },
      { maxAttempts: 1 },
    );
    await run();
    expect(last().payload).toMatchObject({ reason: expect.stringMatching(/read-only/) });
  });

  it("a thrown non-Error still gives a readable reason", async () => {
    const { run, events } = setup({ start: () => Promise.reject({ code: 42 }) }, { maxAttempts: 1 });
    await run();
    expect(events()[2]?.payload).toMatchObject({ reason: 'Non-Error thrown: {"code":42}' });
  });
});

describe("executeRun: what a step returns must be storable (failures are final, retrying would repeat them)", () => {
  const cases: [string, WorkflowSteps, RegExp][] = [
    [
      "a result that is not JSON",
      { start: async () => ({ done: true, result: { when: new Date() } }) },
      /result of workflow "w" at when is a Date/,
    ],
    [
      "a result over 1 MiB",
      { start: async () => ({ done: true, result: "x".repeat(MAX_EVENT_PAYLOAD_BYTES) }) },
      /1 MiB/,
    ],
    [
      "writes over 1 MiB",
      {
        start: async (ctx) => {
          ctx.write("a", "x".repeat(MAX_EVENT_PAYLOAD_BYTES / 2));
          ctx.write("b", "x".repeat(MAX_EVENT_PAYLOAD_BYTES / 2));
          return { step: "start" };
        },
      },
      /writes of step "start": \d+ bytes of JSON, but .*\(1 MiB\)/,
    ],
    [
      "an unknown next step",
      { start: async () => ({ step: "nowhere" }) },
      /continues with step "nowhere", which workflow "w" does not define/,
    ],
    [
      "neither { step } nor { done: true }",
      { start: async () => undefined as never },
      /returned undefined; return \{ step/,
    ],
    [
      'ctx.write("data")',
      {
        start: async (ctx) => {
          ctx.write("data", 1);
          return { done: true };
        },
      },
      /"data" holds the start data/,
    ],
    [
      "ctx.write of a function",
      {
        start: async (ctx) => {
          ctx.write("f", () => 1);
          return { done: true };
        },
      },
      /ctx.write\("f"\) in step "start" is a function/,
    ],
  ];
  for (const [what, steps, reason] of cases) {
    it(what, async () => {
      const { run, events } = setup(steps, { maxAttempts: 3 });
      expect(await run()).toEqual({ status: "terminal" });
      expect(shape(events())).toEqual([
        "workflow_created",
        "step_started(start,1)",
        "step_failed(start,1,final)",
        "workflow_failed",
      ]);
      expect(events()[2]?.payload).toMatchObject({ reason: expect.stringMatching(reason) });
      expect(events()[3]?.payload).toMatchObject({ cause: "non_retryable" });
    });
  }
});

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
    const { run, store, events, clock, definition } = setup(
      { start: async () => ({ done: true, result: "retried" }) },
      { stepTimeoutMS: 5000 },
    );
    store.append([
      {
        runId: RUN,
        workflowId: RUN,
        seq: 2,
        type: "step_started",
        payload: { step: "start", attempt: 1 },
        at: clock.now(),
      },
    ]);
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
    await vi.waitFor(() => expect(events()).toHaveLength(2));
    clock.advance(60_000);
    // A second executor finds the step timed out, records it and runs attempt 2.
    expect(await run()).toEqual({ status: "terminal" });
    slow.open();
    // The first executor's commit finds seq 3 taken: its result is dropped.
    expect(await first).toEqual({ status: "terminal" });
    expect(attempt1Done).toBe(true);
    expect(shape(events())).toEqual([
      "workflow_created",
      "step_started(start,1)",
      "step_failed(start,1,retryable)",
      "step_started(start,2)",
      "step_completed(start)",
      "workflow_completed",
    ]);
    expect(last().payload).toEqual({ result: "attempt 2" });
  });

  it("repairs a missing terminal event it finds (stuck_terminal) instead of running anything", async () => {
    const { run, store, events, clock } = setup({ start: async () => ({ done: true }) });
    store.append([
      {
        runId: RUN,
        workflowId: RUN,
        seq: 2,
        type: "step_started",
        payload: { step: "start", attempt: 1 },
        at: clock.now(),
      },
      {
        runId: RUN,
        workflowId: RUN,
        seq: 3,
        type: "step_failed",
        payload: { step: "start", attempt: 1, reason: "bad", retryable: false },
        at: clock.now(),
      },
    ]);
    expect(await run()).toEqual({ status: "terminal" });
    expect(events().at(-1)?.payload).toEqual({ reason: "bad", cause: "non_retryable" });
  });
});

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
    appendReceivedEvent(store, RUN, "approval", { by: "ada" }, clock.now());
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
    await vi.waitFor(() => expect(events().at(-1)?.type).toBe("step_started"));
    cancelRun(store, RUN, "stop", clock.now());
    hold.open();
    expect(await running).toEqual({ status: "terminal" });
    expect(shape(events())).toEqual(["workflow_created", "step_started(start,1)", "workflow_cancelled"]);
  });
});

describe("executeRun on an exclusive host: a synchronous stretch is written in one append", () => {
  const chain: WorkflowSteps = {
    start: () => ({ step: "middle" }),
    middle: () => ({ step: "finish" }),
    finish: () => ({ done: true, result: "ok" }),
  };

  it("appends the events of steps that never wait in one batch, then tells onEvent of each in order", async () => {
    const { run, events, store } = setup(chain);
    const appends = vi.spyOn(store, "append");
    const seen: string[] = [];
    const result = await run({ exclusive: true, onEvent: (event) => seen.push(event.type) });
    expect(result).toEqual({ status: "terminal" });
    expect(appends).toHaveBeenCalledTimes(1);
    const expected = [
      "workflow_created",
      "step_started(start,1)",
      "step_completed(start->middle)",
      "step_started(middle,1)",
      "step_completed(middle->finish)",
      "step_started(finish,1)",
      "step_completed(finish)",
      "workflow_completed",
    ];
    expect(shape(events())).toEqual(expected);
    expect(seen).toEqual(
      events()
        .slice(1)
        .map((event) => event.type),
    );
    // The same log as a host that writes each append at once.
    const plain = setup(chain);
    await plain.run();
    expect(shape(plain.events())).toEqual(expected);
  });

  /** A run whose second step waits on a gate, run on an exclusive host until that step is in flight. */
  async function slowStepInFlight() {
    const hold = gate();
    const subject = setup({
      start: () => ({ step: "slow" }),
      slow: async () => {
        await hold.promise;
        return { done: true, result: 1 };
      },
    });
    const running = subject.run({ exclusive: true });
    // The claim is in the log before the step waits.
    await vi.waitFor(() => expect(shape(subject.events()).at(-1)).toBe("step_started(slow,1)"));
    return { ...subject, hold, running };
  }

  it("writes the claim before a step waits, so the log shows the step in flight", async () => {
    const { hold, running, events } = await slowStepInFlight();
    hold.open();
    expect(await running).toEqual({ status: "terminal" });
    expect(shape(events()).slice(-3)).toEqual(["step_started(slow,1)", "step_completed(slow)", "workflow_completed"]);
  });

  it.each([
    {
      appended: "a cancel: the step's result is dropped",
      append: (store: ReturnType<typeof setup>["store"], now: number) => cancelRun(store, RUN, "stop", now),
      tail: ["step_started", "workflow_cancelled"],
    },
    {
      appended: "an event sent: it is kept, the step's completion follows it",
      append: (store: ReturnType<typeof setup>["store"], now: number) =>
        appendReceivedEvent(store, RUN, "ping", null, now),
      tail: ["step_started", "event_received", "step_completed", "workflow_completed"],
    },
  ])("meets what others appended while a step waited, $appended", async ({ append, tail }) => {
    const { hold, running, events, store, clock } = await slowStepInFlight();
    append(store, clock.now());
    hold.open();
    expect(await running).toEqual({ status: "terminal" });
    expect(
      events()
        .map((event) => event.type)
        .slice(-tail.length),
    ).toEqual(tail);
  });
});

describe("executeRun: a failed step keeps its error's shape (step_failed.error, beyond the spec)", () => {
  const deep = new Error("charge failed", {
    cause: new TypeError("fetch failed", { cause: Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }) }),
  });
  const hostile = new Error("hostile");
  Object.defineProperty(hostile, "stack", {
    get() {
      throw new Error("no stack for you");
    },
  });
  const chain = (depth: number): Error =>
    depth === 0 ? new Error("root") : new Error(`level ${depth}`, { cause: chain(depth - 1) });
  const messages = (error: { message: string; cause?: unknown } | undefined): string[] =>
    error ? [error.message, ...messages(error.cause as typeof error | undefined)] : [];

  it.each([
    {
      name: "an error with causes: each with its name, message, code and raw stack",
      thrown: deep,
      error: {
        name: "Error",
        message: "charge failed",
        stack: expect.stringMatching(/^Error: charge failed\n\s+at /),
        cause: {
          name: "TypeError",
          message: "fetch failed",
          stack: expect.stringMatching(/^TypeError: fetch failed\n/),
          cause: {
            name: "Error",
            message: "socket hang up",
            code: "ECONNRESET",
            stack: expect.stringMatching(/^Error: socket hang up\n/),
          },
        },
      },
    },
    {
      name: "a PlatformError: its code",
      thrown: new PlatformError("upstream_error", "the provider answered 500"),
      error: expect.objectContaining({
        name: "PlatformError",
        code: "upstream_error",
        message: "the provider answered 500",
      }),
    },
    {
      name: "a thrown string: described, without a stack",
      thrown: "out of stock",
      error: { name: "Non-Error string", message: "out of stock" },
    },
    {
      name: "an error whose stack getter throws: the rest is kept",
      thrown: hostile,
      error: { name: "Error", message: "hostile" },
    },
  ])("$name", async ({ thrown, error }) => {
    const { run, events } = setup({
      start: async () => {
        throw thrown;
      },
    });
    await run();
    expect((events()[2]!.payload as { error?: unknown }).error).toEqual(error);
  });

  it("bounds it: name 200, message 4,000 (as reason), stack 16 KiB, 3 causes; cut texts end with …", async () => {
    const huge = new Error("m".repeat(10_000), { cause: chain(6) });
    huge.name = "N".repeat(500);
    huge.stack = `S${"s".repeat(40_000)}`;
    const { run, events } = setup({
      start: async () => {
        throw huge;
      },
    });
    await run();
    const payload = events()[2]!.payload as { reason: string; error: { name: string; message: string; stack: string } };
    expect(STEP_ERROR_LIMITS).toEqual({ name: 200, message: 4000, stack: 16_384, causes: 3 });
    expect(payload.reason).toHaveLength(4000);
    expect(payload.error.name).toHaveLength(200);
    expect(payload.error.name.endsWith("…")).toBe(true);
    expect(payload.error.message).toHaveLength(4000);
    expect(payload.error.stack).toHaveLength(16_384);
    expect(payload.error.stack.startsWith("Ss")).toBe(true);
    expect(messages(payload.error)).toEqual([payload.error.message, "level 6", "level 5", "level 4"]);
  });

  it("records the engine's error for what a step returned, and no error where nothing was thrown (a timeout)", async () => {
    const { run, events } = setup({ start: async () => ({ step: "nowhere" }) });
    await run();
    expect((events()[2]!.payload as { error?: unknown }).error).toMatchObject({
      name: "PlatformError",
      code: "invalid_input",
      message: expect.stringContaining('continues with step "nowhere"'),
    });
    const slow = setup({ start: () => new Promise(() => {}) }, { stepTimeoutMS: 1, maxAttempts: 1 });
    await slow.run();
    expect(shape(slow.events())).toContain("step_failed(start,1,final)");
    expect(slow.events()[2]?.payload).not.toHaveProperty("error");
  });

  it("knows NonRetryableError by its brand, from any copy of the runtime, not by its name", async () => {
    // An error of another copy of the class carries the same brand; one that only borrows the name does not.
    const otherCopy = new Error("card declined");
    otherCopy.name = "NonRetryableError";
    brandError(otherCopy, "NonRetryableError");
    const lookalike = new Error("card declined");
    lookalike.name = "NonRetryableError";
    for (const [thrown, final] of [
      [otherCopy, true],
      [lookalike, false],
    ] as const) {
      const { run, events } = setup({
        start: async () => {
          throw thrown;
        },
      });
      await run();
      expect(shape(events())[2]).toBe(final ? "step_failed(start,1,final)" : "step_failed(start,1,retryable)");
    }
  });
});
