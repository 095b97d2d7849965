import { type Continuation, decodeContinuation } from "./continuation.ts";
import { FIRST_STEP } from "../api/definition.ts";
import type { StoredEvent, WorkflowFailureCause } from "./events.ts";
import type { QueuedEvent } from "../control/receivedEvents.ts";

/** What the resolver reads of a run's rollbacks (rollback.ts folds it from the log). */
export interface RollbackCursor {
  /** The completion to undo next; null when none is left. */
  readonly next: { readonly step: string; readonly completedSeq: number } | null;
  /** The failure (or cancel) the rollbacks follow; null while the run has not failed. */
  readonly failure: { readonly reason: string; readonly cause: WorkflowFailureCause | "cancelled" } | null;
}

/** What the engine does next for a run, decided from its last event alone. */
export type NextAction =
  /**
   * Claim `step` (step_started), not before `notBefore`
   * (epoch ms: a sleep's `wake_at`, or a wait's `timeout_at`), and, after a
   * wait, with `event` as `ctx.event` (null: the wait timed out).
   */
  | { kind: "start_step"; step: string; attempt: number; notBefore?: number; event?: QueuedEvent | null }
  /** The run waits for an event named `name`, without a timeout; nothing is due. */
  | { kind: "wait_for_event"; step: string; name: string }
  /** The run waits for its children `pending` (run ids) to end; each one's end wakes it. */
  | { kind: "wait_for_children"; step: string; pending: string[] }
  /**
   * Write workflow_completed. Only reachable when a step_completed without
   * next_step is the last event (stuck_terminal): normally that event and
   * workflow_completed are written in one batch. The step's result is not
   * part of step_completed's payload, so the repaired run completes with
   * `result: null`.
   */
  | { kind: "complete"; result: null }
  /**
   * Write workflow_failed: the last step_failed ends the run but its terminal event is missing
   * (stuck_terminal), or the run's last rollback is done.
   */
  | { kind: "fail"; reason: string; cause: WorkflowFailureCause }
  /**
   * Claim the rollback of the completion at `completedSeq` (rollback_started), not before
   * `notBefore` (a failed rollback's backoff, set by the executor).
   */
  | { kind: "start_rollback"; step: string; completedSeq: number; attempt: number }
  /** Write workflow_cancelled: a cancel that rolled back first (cancel_requested) is done with its rollbacks. */
  | { kind: "cancel"; reason: string }
  /** The run is queued (flow control); its queue appends workflow_dequeued when its turn comes. */
  | { kind: "queued" }
  /** Nothing to do: no run, a terminal run, or a step in flight (step_started). */
  | { kind: "none" };

/** What a run has outstanding besides its last event: each defaults to none. */
export interface RunOutstanding {
  /** Events sent to the run and not yet delivered, in arrival order. */
  queued?: readonly QueuedEvent[];
  /** Run ids of the run's children that have ended. */
  finished?: { has(runId: string): boolean };
  /** The completions still to be undone and the failure they follow. */
  rollbacks?: RollbackCursor;
}

/**
 * The run's transition table as a pure function.
 * `maxAttempts` (the definition's) decides whether a retryable failure may be
 * attempted again; a step_failed that says retryable on its last allowed
 * attempt (e.g. maxAttempts lowered since) therefore ends the run.
 *
 * `last` is the run's last event other than a control event
 * (event_received only queues a delivery, the pause marks only gate new
 * claims; the step loop honours a pause); of {@link RunOutstanding}, `queued` holds the events sent to the run and
 * not yet delivered, in arrival order. Only a wait reads them: it takes the
 * first one with its name that arrived by its `timeout_at`. `finished` holds
 * the run ids of the run's children that have ended (child_finished): only a
 * `children` continuation reads it. `rollbacks` holds the completions still to
 * be undone and the failure they follow (rollback.ts): only a final failure
 * and the rollback events read it.
 */
export function resolveNextAction(
  last: StoredEvent | null,
  maxAttempts: number,
  { queued = [], finished = NO_CHILDREN, rollbacks = NO_ROLLBACKS }: RunOutstanding = {},
): NextAction {
  if (last === null) return { kind: "none" };
  switch (last.type) {
    case "workflow_created":
      return last.payload.queued ? { kind: "queued" } : { kind: "start_step", step: FIRST_STEP, attempt: 1 };
    case "start_replaced":
      return { kind: "queued" };
    case "workflow_dequeued":
      return { kind: "start_step", step: FIRST_STEP, attempt: 1 };
    case "step_started":
      return { kind: "none" };
    case "step_completed":
      return actionAfter(decodeContinuation(last.payload), queued, finished);
    case "step_failed": {
      const { step, attempt, reason, retryable } = last.payload;
      if (retryable && attempt < maxAttempts) return { kind: "start_step", step, attempt: attempt + 1 };
      if (rollbacks.next) return startRollback(rollbacks.next, 1);
      // A non-retryable event cannot say whether the error was fatal or the attempts ran out; the count can.
      return { kind: "fail", reason, cause: attempt >= maxAttempts ? "attempts_exhausted" : "non_retryable" };
    }
    case "rollback_started":
      return { kind: "none" };
    case "cancel_requested":
      return rollbacks.next ? startRollback(rollbacks.next, 1) : { kind: "cancel", reason: last.payload.reason };
    case "rollback_failed": {
      const { step, attempt, completed_seq, retryable } = last.payload;
      if (retryable && attempt < maxAttempts)
        return { kind: "start_rollback", step, completedSeq: completed_seq, attempt: attempt + 1 };
      return afterRollback(rollbacks);
    }
    case "rollback_completed":
      return afterRollback(rollbacks);
    case "workflow_completed":
    case "workflow_failed":
    case "workflow_cancelled":
    // Never a state (callers pass the last other event); listed so the switch stays exhaustive.
    case "event_received":
    case "child_finished":
    case "workflow_paused":
    case "workflow_resumed":
      return { kind: "none" };
  }
}

/** What a completed step's continuation leads to: each kind's row of the transition table. */
function actionAfter(
  next: Continuation,
  queued: readonly QueuedEvent[],
  finished: { has(runId: string): boolean },
): NextAction {
  switch (next.kind) {
    case "done":
      return { kind: "complete", result: null };
    case "next_step":
      return { kind: "start_step", step: next.step, attempt: 1 };
    case "sleep":
      return { kind: "start_step", step: next.step, attempt: 1, notBefore: next.until };
    case "wait_for_event": {
      const { step, event: name, until } = next;
      const event = queued.find((e) => e.name === name && (until === undefined || e.at <= until));
      if (event) return { kind: "start_step", step, attempt: 1, event };
      if (until === undefined) return { kind: "wait_for_event", step, name };
      return { kind: "start_step", step, attempt: 1, notBefore: until, event: null };
    }
    case "children": {
      const pending = next.children
        .filter((child) => child.refused === undefined && !finished.has(child.runId))
        .map((child) => child.runId);
      if (pending.length === 0) return { kind: "start_step", step: next.step, attempt: 1 };
      return { kind: "wait_for_children", step: next.step, pending };
    }
  }
}

/** The next rollback, or, with none left, the failure they followed. */
function afterRollback(rollbacks: RollbackCursor): NextAction {
  if (rollbacks.next) return startRollback(rollbacks.next, 1);
  const failure = rollbacks.failure;
  // Only a log that lost its final step_failed could get here; the run still ends failed.
  if (!failure) return { kind: "fail", reason: "The run failed and was rolled back", cause: "non_retryable" };
  if (failure.cause === "cancelled") return { kind: "cancel", reason: failure.reason };
  return { kind: "fail", reason: failure.reason, cause: failure.cause };
}

function startRollback(next: { step: string; completedSeq: number }, attempt: number): NextAction {
  return { kind: "start_rollback", step: next.step, completedSeq: next.completedSeq, attempt };
}

const NO_CHILDREN: ReadonlySet<string> = new Set();
const NO_ROLLBACKS: RollbackCursor = { next: null, failure: null };
