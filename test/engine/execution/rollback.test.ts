/**
 * Rollbacks under crashes and hangs, on hand-made logs: an interrupted or timed-out rollback is
 * retried, a crash between two rollbacks resumes with the next one (each handler runs once), and
 * recovery finds a run stuck between rollbacks.
 */
import { describe, expect, it } from "vitest";
import { defineWorkflow } from "#src/engine/api/definition.ts";
import { executeRun } from "#src/engine/execution/executeRun.ts";
import { createMemoryEventStore } from "#src/engine/storage/memoryEventStore.ts";
import { failInterruptedStep, recoverRun } from "#src/engine/control/recovery.ts";
import { logBuilder, shape } from "#test/support/workflow/index.ts";

const T0 = 1_700_000_000_000;
const RUN = "run-1";
const ran: string[] = [];
const definition = defineWorkflow(
  "order",
  {
    start: async () => ({ step: "reserve" }),
    reserve: async () => ({ step: "charge" }),
    charge: async () => ({ step: "ship" }),
    ship: async () => {
      throw new Error("out of stock");
    },
  },
  {
    maxAttempts: 2,
    stepTimeoutMS: 1000,
    backoff: { initialMS: 100, jitter: 0 },
    rollback: {
      reserve: async () => {
        ran.push("reserve");
      },
      charge: async () => {
        ran.push("charge");
      },
    },
    rollbackOptions: { maxAttempts: 2, stepTimeoutMS: 500, backoff: { initialMS: 10, jitter: 0 } },
  },
);

/** reserve and charge completed (seq 5 and 7); ship is in flight at `attempt`. */
const upToShip = (attempt: number) =>
  logBuilder(RUN)
    .created("order")
    .add("step_started", { step: "start", attempt: 1 })
    .add("step_completed", { step: "start", writes: {}, next_step: "reserve" })
    .add("step_started", { step: "reserve", attempt: 1 })
    .add("step_completed", { step: "reserve", writes: { reservation: "R-1" }, next_step: "charge" })
    .add("step_started", { step: "charge", attempt: 1 })
    .add("step_completed", { step: "charge", writes: { charge: "ch_1" }, next_step: "ship" })
    .add("step_started", { step: "ship", attempt });

const failedShip = () =>
  upToShip(2).add("step_failed", { step: "ship", attempt: 2, reason: "out of stock", retryable: false });

async function drive(store: ReturnType<typeof createMemoryEventStore>, at: number) {
  return executeRun(store, definition, RUN, { now: () => at, sleep: async () => {} });
}

describe("rollbacks under crashes and hangs", () => {
  it("a step interrupted on its last attempt is recorded without workflow_failed, and the rollbacks run", async () => {
    ran.length = 0;
    const store = createMemoryEventStore();
    upToShip(2).writeTo(store);
    expect(shape(failInterruptedStep(store, definition, RUN, T0))).toEqual(["step_failed(ship,2,final)"]);
    expect(await drive(store, T0)).toEqual({ status: "terminal" });
    expect(shape(store.events(RUN)).slice(9)).toEqual([
      "rollback_started(charge,1)",
      "rollback_completed(charge)",
      "rollback_started(reserve,1)",
      "rollback_completed(reserve)",
      "workflow_failed",
    ]);
    expect(store.lastEvent(RUN)?.payload).toEqual({ reason: "interrupted", cause: "attempts_exhausted" });
    expect(ran).toEqual(["charge", "reserve"]);
  });

  it("a crash after charge's rollback completed resumes with reserve's: each handler runs once", async () => {
    ran.length = 0;
    const store = createMemoryEventStore();
    failedShip()
      .add("rollback_started", { step: "charge", attempt: 1, completed_seq: 7 })
      .add("rollback_completed", { step: "charge", completed_seq: 7 })
      .writeTo(store);
    expect(recoverRun(store, definition, { runId: RUN, now: T0, executingHere: false })).toEqual({
      reason: "stuck_rollback",
      appended: [],
      reenqueue: true,
    });
    await drive(store, T0);
    expect(ran).toEqual(["reserve"]);
    expect(shape(store.events(RUN)).slice(11)).toEqual([
      "rollback_started(reserve,1)",
      "rollback_completed(reserve)",
      "workflow_failed",
    ]);
  });

  it("a rollback in flight when its executor died is recorded as interrupted and attempted again", async () => {
    ran.length = 0;
    const store = createMemoryEventStore();
    failedShip().add("rollback_started", { step: "charge", attempt: 1, completed_seq: 7 }).writeTo(store);
    expect(shape(failInterruptedStep(store, definition, RUN, T0), { reasons: true })).toEqual([
      "rollback_failed(charge,1,interrupted,retryable)",
    ]);
    expect(await drive(store, T0)).toEqual({ status: "waiting", wakeAt: T0 + 10 });
    expect(await drive(store, T0 + 10)).toEqual({ status: "terminal" });
    expect(ran).toEqual(["charge", "reserve"]);
    expect(shape(store.events(RUN)).slice(11, 13)).toEqual([
      "rollback_started(charge,2)",
      "rollback_completed(charge)",
    ]);
  });

  it("a rollback that outlives its timeout is recorded by recovery as timeout, then retried", () => {
    const store = createMemoryEventStore();
    failedShip().add("rollback_started", { step: "charge", attempt: 1, completed_seq: 7 }).writeTo(store);
    expect(recoverRun(store, definition, { runId: RUN, now: T0 + 499, executingHere: false }).reason).toBeNull();
    const outcome = recoverRun(store, definition, { runId: RUN, now: T0 + 500, executingHere: false });
    expect(outcome.reason).toBe("timeout");
    expect(shape(outcome.appended, { reasons: true })).toEqual(["rollback_failed(charge,1,timeout,retryable)"]);
    expect(outcome.reenqueue).toBe(true);
  });

  it("after the last rollback, a missing workflow_failed is written by recovery with the failing step's reason", () => {
    const store = createMemoryEventStore();
    failedShip()
      .add("rollback_started", { step: "charge", attempt: 1, completed_seq: 7 })
      .add("rollback_failed", { step: "charge", attempt: 1, completed_seq: 7, reason: "down", retryable: false })
      .add("rollback_started", { step: "reserve", attempt: 1, completed_seq: 5 })
      .add("rollback_completed", { step: "reserve", completed_seq: 5 })
      .writeTo(store);
    const outcome = recoverRun(store, definition, { runId: RUN, now: T0, executingHere: false });
    expect(outcome.reason).toBe("stuck_terminal");
    expect(outcome.appended.map((event) => event.payload)).toEqual([
      { reason: "out of stock", cause: "attempts_exhausted" },
    ]);
    expect(outcome.reenqueue).toBe(false);
  });
});
