import { describe, expect, it } from "vitest";
import type { StoredEvent, WorkflowEventPayloads, WorkflowEventType } from "#src/engine/execution/events.ts";
import type { QueuedEvent } from "#src/engine/control/receivedEvents.ts";
import { resolveNextAction, type NextAction, type RollbackCursor } from "#src/engine/execution/resolveNextAction.ts";

function last<T extends WorkflowEventType>(type: T, payload: WorkflowEventPayloads[T], seq = 5): StoredEvent {
  return { runId: "r", workflowId: "w", seq, type, payload, at: 0 } as StoredEvent;
}

const MAX_ATTEMPTS = 3;

// One row per row of the core transition table that the resolver decides
// (rows whose mover is `workflow.start` or a step's outcome are covered in
// createRun.test.ts and executeRun.test.ts), plus the repair rows rule 1 allows.
const rows: { row: string; last: StoredEvent | null; expected: NextAction }[] = [
  { row: "(none): nothing to execute until workflow.start creates the run", last: null, expected: { kind: "none" } },
  {
    row: "workflow_created → step_started for step `start`, attempt 1",
    last: last("workflow_created", { workflowName: "w", writes: { data: null } }, 1),
    expected: { kind: "start_step", step: "start", attempt: 1 },
  },
  {
    row: "step_started → nothing (the step is in flight)",
    last: last("step_started", { step: "a", attempt: 2 }),
    expected: { kind: "none" },
  },
  {
    row: "step_completed with next_step → step_started for the next step, attempt 1",
    last: last("step_completed", { step: "a", writes: {}, next_step: "b" }),
    expected: { kind: "start_step", step: "b", attempt: 1 },
  },
  {
    row: "step_failed (retryable) → step_started with incremented attempt",
    last: last("step_failed", { step: "a", attempt: 2, reason: "boom", retryable: true }),
    expected: { kind: "start_step", step: "a", attempt: 3 },
  },
  {
    row: "workflow_completed → terminal, no further action",
    last: last("workflow_completed", { result: 1 }),
    expected: { kind: "none" },
  },
  {
    row: "workflow_failed → terminal, no further action",
    last: last("workflow_failed", { reason: "boom", cause: "non_retryable" }),
    expected: { kind: "none" },
  },
  // Rule 1's "complete the workflow" and "fail the workflow": only when a terminal event is missing (stuck_terminal).
  {
    row: "step_completed without next_step, workflow_completed missing → complete (result null)",
    last: last("step_completed", { step: "a", writes: { x: 1 } }),
    expected: { kind: "complete", result: null },
  },
  {
    row: "step_failed non-retryable, workflow_failed missing → fail with the step's reason",
    last: last("step_failed", { step: "a", attempt: 1, reason: "card declined", retryable: false }),
    expected: { kind: "fail", reason: "card declined", cause: "non_retryable" },
  },
  {
    row: "step_failed on the last attempt, workflow_failed missing → fail, attempts exhausted",
    last: last("step_failed", { step: "a", attempt: 3, reason: "timeout", retryable: false }),
    expected: { kind: "fail", reason: "timeout", cause: "attempts_exhausted" },
  },
  {
    row: "step_failed says retryable but no attempts remain (maxAttempts lowered) → fail",
    last: last("step_failed", { step: "a", attempt: 3, reason: "boom", retryable: true }),
    expected: { kind: "fail", reason: "boom", cause: "attempts_exhausted" },
  },
];

const queued = (seq: number, name: string, at: number, payload: unknown = seq) =>
  ({ seq, name, payload, at }) as QueuedEvent;

/** Step a completed, and step b waits for an "approval" event (until `timeoutAt`, if given). */
const waitingForApproval = (timeoutAt?: number) =>
  last("step_completed", {
    step: "a",
    writes: {},
    next_step: "b",
    waiting_for: "approval",
    ...(timeoutAt === undefined ? {} : { timeout_at: timeoutAt }),
  });

// The platform's additions: sleeps, waits for an event and cancel. `queued` is the run's undelivered events in arrival order.
const beyondRows: { row: string; last: StoredEvent; queued?: QueuedEvent[]; expected: NextAction }[] = [
  {
    row: "step_completed with wake_at → step_started for the next step, not before wake_at",
    last: last("step_completed", { step: "a", writes: {}, next_step: "b", wake_at: 5000 }),
    expected: { kind: "start_step", step: "b", attempt: 1, notBefore: 5000 },
  },
  {
    row: "step_completed waiting_for, nothing queued, no timeout → wait for the event",
    last: waitingForApproval(),
    expected: { kind: "wait_for_event", step: "b", name: "approval" },
  },
  {
    row: "step_completed waiting_for, nothing queued, timeout_at → step_started with ctx.event null, not before timeout_at",
    last: waitingForApproval(900),
    expected: { kind: "start_step", step: "b", attempt: 1, notBefore: 900, event: null },
  },
  {
    row: "step_completed waiting_for, a matching event queued → step_started with that event, at once",
    last: waitingForApproval(900),
    queued: [queued(3, "approval", 100)],
    expected: { kind: "start_step", step: "b", attempt: 1, event: queued(3, "approval", 100) },
  },
  {
    row: "several queued: the first matching one by arrival; others stay queued",
    last: waitingForApproval(),
    queued: [queued(2, "other", 50), queued(3, "approval", 60), queued(4, "approval", 70)],
    expected: { kind: "start_step", step: "b", attempt: 1, event: queued(3, "approval", 60) },
  },
  {
    row: "an event that arrived after timeout_at does not end that wait: the timeout does",
    last: waitingForApproval(900),
    queued: [queued(7, "approval", 901)],
    expected: { kind: "start_step", step: "b", attempt: 1, notBefore: 900, event: null },
  },
  {
    row: "an event that arrived exactly at timeout_at wins",
    last: waitingForApproval(900),
    queued: [queued(7, "approval", 900)],
    expected: { kind: "start_step", step: "b", attempt: 1, event: queued(7, "approval", 900) },
  },
  {
    row: "step_failed with retry_at (RetryAfterError) → retried like any retryable failure; the executor waits for retry_at",
    last: last("step_failed", { step: "a", attempt: 1, reason: "busy", retryable: true, retry_at: 5000 }),
    expected: { kind: "start_step", step: "a", attempt: 2 },
  },
  {
    row: "step_failed reason interrupted (retryable) → step_started with incremented attempt",
    last: last("step_failed", { step: "a", attempt: 1, reason: "interrupted", retryable: true }),
    expected: { kind: "start_step", step: "a", attempt: 2 },
  },
  {
    row: "workflow_cancelled → terminal, no further action (queued events are never delivered)",
    last: last("workflow_cancelled", { reason: "no longer needed" }),
    queued: [queued(3, "approval", 1)],
    expected: { kind: "none" },
  },
];

describe("resolveNextAction, the platform's additions: sleep, wait for an event, retry-after, interrupted, cancel", () => {
  for (const { row, last: event, queued: inbox, expected } of beyondRows) {
    it(row, () => {
      expect(resolveNextAction(event, MAX_ATTEMPTS, { queued: inbox })).toEqual(expected);
    });
  }

  it("a plain step_completed ignores queued events (only a wait reads them)", () => {
    const event = last("step_completed", { step: "a", writes: {}, next_step: "b" });
    expect(resolveNextAction(event, MAX_ATTEMPTS, { queued: [queued(2, "approval", 0)] })).toEqual({
      kind: "start_step",
      step: "b",
      attempt: 1,
    });
  });
});

describe("resolveNextAction: the core transition table", () => {
  for (const { row, last: event, expected } of rows) {
    it(row, () => {
      expect(resolveNextAction(event, MAX_ATTEMPTS)).toEqual(expected);
    });
  }

  it("decides from the last event alone (rule 1): the same last event gives the same action whatever preceded it", () => {
    const event = last("step_completed", { step: "a", writes: {}, next_step: "b" }, 40);
    expect(resolveNextAction(event, MAX_ATTEMPTS)).toEqual(resolveNextAction({ ...event, seq: 2 }, MAX_ATTEMPTS));
  });
});

// Rollbacks (rollback.ts): the resolver reads the fold's next completion to undo and the failure it follows.
const failure = { step: "ship", reason: "out of stock", cause: "non_retryable" as const };
const chargeLeft = { next: { step: "charge", completedSeq: 7 }, failure };
const noneLeft = { next: null, failure };
const rollbackRows: {
  row: string;
  last: StoredEvent;
  rollbacks: RollbackCursor;
  expected: NextAction;
}[] = [
  {
    row: "final step_failed with completions to undo → rollback_started for the latest, attempt 1",
    last: last("step_failed", { step: "ship", attempt: 1, reason: "out of stock", retryable: false }),
    rollbacks: { next: { step: "charge", completedSeq: 7 }, failure: null },
    expected: { kind: "start_rollback", step: "charge", completedSeq: 7, attempt: 1 },
  },
  {
    row: "retryable step_failed → the step's retry, whatever there is to undo",
    last: last("step_failed", { step: "ship", attempt: 1, reason: "busy", retryable: true }),
    rollbacks: chargeLeft,
    expected: { kind: "start_step", step: "ship", attempt: 2 },
  },
  {
    row: "final step_failed with nothing to undo → fail at once, as without rollbacks",
    last: last("step_failed", { step: "ship", attempt: 1, reason: "out of stock", retryable: false }),
    rollbacks: { next: null, failure: null },
    expected: { kind: "fail", reason: "out of stock", cause: "non_retryable" },
  },
  {
    row: "rollback_started → nothing (the rollback is in flight)",
    last: last("rollback_started", { step: "charge", attempt: 1, completed_seq: 7 }),
    rollbacks: chargeLeft,
    expected: { kind: "none" },
  },
  {
    row: "rollback_failed (retryable) → rollback_started with incremented attempt",
    last: last("rollback_failed", { step: "charge", attempt: 1, completed_seq: 7, reason: "down", retryable: true }),
    rollbacks: chargeLeft,
    expected: { kind: "start_rollback", step: "charge", completedSeq: 7, attempt: 2 },
  },
  {
    row: "rollback_failed (final) → the next rollback",
    last: last("rollback_failed", { step: "ship2", attempt: 3, completed_seq: 9, reason: "down", retryable: false }),
    rollbacks: chargeLeft,
    expected: { kind: "start_rollback", step: "charge", completedSeq: 7, attempt: 1 },
  },
  {
    row: "rollback_failed retryable on its last allowed attempt → the next rollback",
    last: last("rollback_failed", { step: "ship2", attempt: 3, completed_seq: 9, reason: "down", retryable: true }),
    rollbacks: chargeLeft,
    expected: { kind: "start_rollback", step: "charge", completedSeq: 7, attempt: 1 },
  },
  {
    row: "rollback_completed with one left → the next rollback",
    last: last("rollback_completed", { step: "ship2", completed_seq: 9 }),
    rollbacks: chargeLeft,
    expected: { kind: "start_rollback", step: "charge", completedSeq: 7, attempt: 1 },
  },
  {
    row: "rollback_completed, none left → fail with the failing step's reason and cause",
    last: last("rollback_completed", { step: "charge", completed_seq: 7 }),
    rollbacks: noneLeft,
    expected: { kind: "fail", reason: "out of stock", cause: "non_retryable" },
  },
  {
    row: "rollback_failed (final), none left → fail with the failing step's reason and cause",
    last: last("rollback_failed", { step: "charge", attempt: 3, completed_seq: 7, reason: "down", retryable: false }),
    rollbacks: noneLeft,
    expected: { kind: "fail", reason: "out of stock", cause: "non_retryable" },
  },
  {
    row: "cancel_requested with completions to undo → rollback_started for the latest",
    last: last("cancel_requested", { reason: "changed my mind" }),
    rollbacks: {
      next: { step: "charge", completedSeq: 7 },
      failure: { reason: "changed my mind", cause: "cancelled" },
    },
    expected: { kind: "start_rollback", step: "charge", completedSeq: 7, attempt: 1 },
  },
  {
    row: "cancel_requested with nothing (left) to undo → workflow_cancelled with its reason",
    last: last("cancel_requested", { reason: "changed my mind" }),
    rollbacks: { next: null, failure: { reason: "changed my mind", cause: "cancelled" } },
    expected: { kind: "cancel", reason: "changed my mind" },
  },
  {
    row: "the last rollback after a cancel → workflow_cancelled with the cancel's reason",
    last: last("rollback_completed", { step: "charge", completed_seq: 7 }),
    rollbacks: { next: null, failure: { reason: "changed my mind", cause: "cancelled" } },
    expected: { kind: "cancel", reason: "changed my mind" },
  },
];

describe("resolveNextAction: rollbacks", () => {
  for (const { row, last: event, rollbacks, expected } of rollbackRows) {
    it(row, () => {
      expect(resolveNextAction(event, MAX_ATTEMPTS, { rollbacks })).toEqual(expected);
    });
  }
});
