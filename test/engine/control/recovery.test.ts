import { describe, expect, it } from "vitest";
import { defineWorkflow } from "#src/engine/api/definition.ts";
import { executeRun } from "#src/engine/execution/executeRun.ts";
import { createMemoryEventStore } from "#src/engine/storage/memoryEventStore.ts";
import { detectRecovery, failInterruptedStep, recoverRun } from "#src/engine/control/recovery.ts";
import { logBuilder, shape } from "#test/support/workflow/index.ts";

const T0 = 1_700_000_000_000;
const RUN = "run-1";
const definition = defineWorkflow(
  "w",
  {
    start: async (ctx) => {
      ctx.write("started", true);
      return { step: "finish" };
    },
    finish: async () => ({ done: true, result: "finished" }),
  },
  { maxAttempts: 2, stepTimeoutMS: 1000, backoff: { initialMS: 100, jitter: 0 } },
);

/** Runs the run to its end with a clock that jumps past any backoff. */
async function finish(store: ReturnType<typeof createMemoryEventStore>, at: number) {
  return executeRun(store, definition, RUN, { now: () => at, sleep: async () => {} });
}

/** A log whose first attempt at `start` failed with `reason`. */
const failedFirstAttempt = (reason: string, retryable: boolean) =>
  logBuilder(RUN)
    .created("w")
    .add("step_started", { step: "start", attempt: 1 })
    .add("step_failed", { step: "start", attempt: 1, reason, retryable });

describe("recovery: every stuck state, manufactured and repaired", () => {
  it("stuck_created: workflow_created but the first step never started → re-enqueue; execution then completes it", async () => {
    const store = createMemoryEventStore();
    logBuilder(RUN).created("w").writeTo(store);
    const outcome = recoverRun(store, definition, { runId: RUN, now: T0 + 60_000, executingHere: false });
    expect(outcome).toEqual({ reason: "stuck_created", appended: [], reenqueue: true });
    expect(await finish(store, T0 + 60_000)).toEqual({ status: "terminal" });
    expect(store.lastEvent(RUN)?.payload).toEqual({ result: "finished" });
  });

  it("stuck_completed: step_completed with next_step but the next step never claimed → re-enqueue", async () => {
    const store = createMemoryEventStore();
    logBuilder(RUN)
      .created("w")
      .add("step_started", { step: "start", attempt: 1 })
      .add("step_completed", { step: "start", writes: { started: true }, next_step: "finish" })
      .writeTo(store);
    expect(recoverRun(store, definition, { runId: RUN, now: T0 + 60_000, executingHere: false })).toEqual({
      reason: "stuck_completed",
      appended: [],
      reenqueue: true,
    });
    await finish(store, T0 + 60_000);
    expect(shape(store.events(RUN)).slice(3)).toEqual([
      "step_started(finish,1)",
      "step_completed(finish)",
      "workflow_completed",
    ]);
  });

  it("stuck_failed: a retryable step_failed whose retry never started → re-enqueue (even before the retry time)", async () => {
    const store = createMemoryEventStore();
    failedFirstAttempt("flaky", true).writeTo(store);
    expect(recoverRun(store, definition, { runId: RUN, now: T0 + 1, executingHere: false })).toEqual({
      reason: "stuck_failed",
      appended: [],
      reenqueue: true,
    });
    // Before the backoff has passed the executor only reports when to come back.
    expect(await finish(store, T0 + 1)).toEqual({ status: "waiting", wakeAt: T0 + 100 });
    expect(await finish(store, T0 + 100)).toEqual({ status: "terminal" });
    expect(shape(store.events(RUN))[3]).toBe("step_started(start,2)");
  });

  it("timeout with attempts left: writes step_failed{reason: timeout, retryable: true} and re-enqueues", async () => {
    const store = createMemoryEventStore();
    logBuilder(RUN).created("w").add("step_started", { step: "start", attempt: 1 }, T0).writeTo(store);
    expect(detectRecovery(store.lastEvent(RUN), definition, { now: T0 + 999, executingHere: false })).toBeNull();
    const outcome = recoverRun(store, definition, { runId: RUN, now: T0 + 1000, executingHere: false });
    expect(outcome.reason).toBe("timeout");
    expect(outcome.reenqueue).toBe(true);
    expect(outcome.appended.map((e) => [e.seq, e.type, e.payload])).toEqual([
      [3, "step_failed", { step: "start", attempt: 1, reason: "timeout", retryable: true }],
    ]);
    await finish(store, T0 + 2000);
    expect(store.lastEvent(RUN)?.type).toBe("workflow_completed");
  });

  it("timeout on the last attempt: writes step_failed and workflow_failed together, no re-enqueue", () => {
    const store = createMemoryEventStore();
    failedFirstAttempt("flaky", true).add("step_started", { step: "start", attempt: 2 }, T0).writeTo(store);
    const outcome = recoverRun(store, definition, { runId: RUN, now: T0 + 5000, executingHere: false });
    expect(outcome).toMatchObject({ reason: "timeout", reenqueue: false });
    expect(shape(outcome.appended)).toEqual(["step_failed(start,2,final)", "workflow_failed"]);
    expect(store.lastEvent(RUN)?.payload).toEqual({ reason: "timeout", cause: "attempts_exhausted" });
  });

  it("stuck_terminal after a final step: writes workflow_completed (result null)", () => {
    const store = createMemoryEventStore();
    logBuilder(RUN)
      .created("w")
      .add("step_started", { step: "finish", attempt: 1 })
      .add("step_completed", { step: "finish", writes: {} })
      .writeTo(store);
    const outcome = recoverRun(store, definition, { runId: RUN, now: T0 + 10, executingHere: false });
    expect(outcome).toMatchObject({ reason: "stuck_terminal", reenqueue: false });
    expect(store.lastEvent(RUN)).toMatchObject({
      seq: 4,
      type: "workflow_completed",
      payload: { result: null },
      at: T0 + 10,
    });
  });

  it("stuck_terminal after a final failure: writes workflow_failed with the step's reason", () => {
    const store = createMemoryEventStore();
    failedFirstAttempt("card declined", false).writeTo(store);
    expect(recoverRun(store, definition, { runId: RUN, now: T0, executingHere: false })).toMatchObject({
      reason: "stuck_terminal",
      reenqueue: false,
    });
    expect(store.lastEvent(RUN)?.payload).toEqual({ reason: "card declined", cause: "non_retryable" });
    expect(store.activeRunIds()).toEqual([]);
  });

  it("never calls a run stuck while this adapter is executing it, nor a healthy or finished run", () => {
    const created = logBuilder(RUN).created("w").events[0] ?? null;
    expect(detectRecovery(created, definition, { now: T0 + 1e9, executingHere: true })).toBeNull();
    const store = createMemoryEventStore();
    logBuilder(RUN).created("w").add("step_started", { step: "start", attempt: 1 }, T0).writeTo(store);
    expect(recoverRun(store, definition, { runId: RUN, now: T0 + 10, executingHere: false })).toEqual({
      reason: null,
      appended: [],
      reenqueue: false,
    });
    store.append([
      {
        runId: RUN,
        workflowId: RUN,
        seq: 3,
        type: "workflow_failed",
        payload: { reason: "x", cause: "non_retryable" },
        at: T0,
      },
    ]);
    expect(recoverRun(store, definition, { runId: RUN, now: T0 + 1e9, executingHere: false })).toEqual({
      reason: null,
      appended: [],
      reenqueue: false,
    });
    expect(detectRecovery(null, definition, { now: T0, executingHere: false })).toBeNull();
  });

  it("writes nothing when another executor moved the run first (its seq is taken) and asks for an execution instead", () => {
    const store = createMemoryEventStore();
    logBuilder(RUN).created("w").add("step_started", { step: "start", attempt: 1 }, T0).writeTo(store);
    // The executor commits between recovery's read and its write.
    const racing = {
      ...store,
      lastEvent: (runId: string) => {
        const last = store.lastEvent(runId);
        store.append([
          {
            runId: RUN,
            workflowId: RUN,
            seq: 3,
            type: "step_completed",
            payload: { step: "start", writes: {}, next_step: "finish" },
            at: T0,
          },
        ]);
        return last;
      },
    };
    expect(recoverRun(racing, definition, { runId: RUN, now: T0 + 5000, executingHere: false })).toEqual({
      reason: "timeout",
      appended: [],
      reenqueue: true,
    });
    expect(shape(store.events(RUN))).toEqual([
      "workflow_created",
      "step_started(start,1)",
      "step_completed(start->finish)",
    ]);
  });
});

describe("recovery of sleeps, waits and interruptions: sleeping and waiting runs are healthy; interrupted attempts fail at once", () => {
  const sleeping = () =>
    logBuilder(RUN)
      .created("w")
      .add("step_started", { step: "start", attempt: 1 })
      .add("step_completed", { step: "start", writes: {}, next_step: "finish", wake_at: T0 + 5000 });
  const waiting = (timeoutAt?: number) =>
    logBuilder(RUN)
      .created("w")
      .add("step_started", { step: "start", attempt: 1 })
      .add("step_completed", {
        step: "start",
        writes: {},
        next_step: "finish",
        waiting_for: "approval",
        ...(timeoutAt === undefined ? {} : { timeout_at: timeoutAt }),
      });

  const rows: { row: string; log: ReturnType<typeof logBuilder>; now: number; expected: string | null }[] = [
    { row: "sleeping, before wake_at → healthy", log: sleeping(), now: T0 + 4999, expected: null },
    {
      row: "sleeping, wake_at passed and nobody claimed → stuck_completed",
      log: sleeping(),
      now: T0 + 5000,
      expected: "stuck_completed",
    },
    { row: "waiting without a timeout, nothing sent → healthy", log: waiting(), now: T0 + 86_400_000, expected: null },
    { row: "waiting, before timeout_at → healthy", log: waiting(T0 + 1000), now: T0 + 999, expected: null },
    {
      row: "waiting, timeout_at passed → stuck_completed",
      log: waiting(T0 + 1000),
      now: T0 + 1000,
      expected: "stuck_completed",
    },
    {
      row: "waiting, the event was sent but never delivered → stuck_completed",
      log: waiting().add("event_received", { name: "approval", payload: 1 }),
      now: T0 + 1,
      expected: "stuck_completed",
    },
    {
      row: "waiting, only another event was sent → healthy",
      log: waiting().add("event_received", { name: "other", payload: 1 }),
      now: T0 + 1,
      expected: null,
    },
    {
      row: "a step in flight with an event sent meanwhile: the step_started decides (timeout)",
      log: logBuilder(RUN)
        .created("w")
        .add("step_started", { step: "start", attempt: 1 })
        .add("event_received", { name: "approval", payload: 1 }),
      now: T0 + 1000,
      expected: "timeout",
    },
  ];
  for (const { row, log, now, expected } of rows) {
    it(row, () => {
      const store = createMemoryEventStore();
      log.writeTo(store);
      expect(recoverRun(store, definition, { runId: RUN, now: now, executingHere: false }).reason).toBe(expected);
    });
  }

  it("detectRecovery: a cancelled run is never stuck", () => {
    const [cancelled] = logBuilder(RUN).add("workflow_cancelled", { reason: "x" }).events;
    expect(detectRecovery(cancelled!, definition, { now: T0 + 60_000, executingHere: false })).toBeNull();
  });

  it("failInterruptedStep records the attempt in flight as interrupted at once (after an event sent meanwhile), and nothing otherwise", async () => {
    const store = createMemoryEventStore();
    logBuilder(RUN)
      .created("w")
      .add("step_started", { step: "start", attempt: 1 })
      .add("event_received", { name: "approval", payload: 1 })
      .writeTo(store);
    const [failed] = failInterruptedStep(store, definition, RUN, T0 + 1);
    expect(failed?.payload).toEqual({ step: "start", attempt: 1, reason: "interrupted", retryable: true });
    expect(store.lastEvent(RUN)).toMatchObject({ seq: 4, at: T0 + 1 });
    expect(failInterruptedStep(store, definition, RUN, T0 + 2)).toEqual([]);
    // The retry waits out the backoff from the interruption, then the run completes.
    expect(await finish(store, T0 + 1)).toEqual({ status: "waiting", wakeAt: T0 + 101 });
    expect(await finish(store, T0 + 101)).toEqual({ status: "terminal" });
  });

  it("an interruption on the last attempt fails the run (attempts_exhausted)", () => {
    const store = createMemoryEventStore();
    logBuilder(RUN).created("w").add("step_started", { step: "start", attempt: 2 }).writeTo(store);
    const appended = failInterruptedStep(store, definition, RUN, T0);
    expect(shape(appended)).toEqual(["step_failed(start,2,final)", "workflow_failed"]);
    expect(appended[1]?.payload).toEqual({ reason: "interrupted", cause: "attempts_exhausted" });
  });
});
