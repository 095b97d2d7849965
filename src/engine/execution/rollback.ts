import { errorToJSON } from "../../core/errors.ts";
import { stepNamed, stepPolicy, type WorkflowDefinition } from "../api/definition.ts";
import { nextEvent, type StoredEvent, type StoredEventOf, type Writes } from "./events.ts";
import type { RollbackFailure } from "./rollbackContext.ts";
import { MAX_REASON_LENGTH, STEP_ERROR_LIMITS } from "./stepFailure.ts";

/**
 * Rollbacks (sagas). When a run of a workflow with `rollback` handlers fails
 * for good, its final step_failed is written alone (no workflow_failed
 * beside it) and the run stays `running` while the handlers of its completed
 * steps run, latest completion first, each a durable step of its own:
 * rollback_started claims one attempt, rollback_completed or rollback_failed
 * records it (a retryable rollback_failed is attempted again after the
 * rollback backoff). A completion whose rollback completed, or failed for
 * good, is never rolled back again, so a crash between rollbacks resumes
 * with the next one. After the last, workflow_failed ends the run with the
 * failing step's reason and cause. With `rollbackOnCancel`, a cancel of a run
 * with completions to undo appends cancel_requested instead of
 * workflow_cancelled: the same rollbacks run, then workflow_cancelled ends it.
 *
 * Which completions: the run's own step_completed events (not those a rerun
 * copied from its original run: that run rolled them back, or kept them, when
 * it ended) of steps that have a handler in the code running now.
 */

/** One completion to undo: the step_completed at `completedSeq` of `step` (the name the code has now). */
export interface PendingRollback {
  readonly step: string;
  readonly completedSeq: number;
  readonly output: Writes;
}

/** A run's rollbacks folded from its log, event by event. */
export interface RollbackFold {
  /** The completion to undo next (the latest one not yet undone); null when none is left. */
  readonly next: PendingRollback | null;
  /** The failure the rollbacks follow (the run's final step_failed); null while the run has not failed. */
  readonly failure: RollbackFailure | null;
  /** The completion at `seq`, while it is still to be undone. */
  pendingAt(seq: number): PendingRollback | undefined;
  apply(event: StoredEvent): void;
}

/** Whether the workflow has any rollback handler (the fold costs nothing for one that has none). */
export function hasRollbacks(definition: Pick<WorkflowDefinition, "rollback">): boolean {
  for (const _ in definition.rollback) return true;
  return false;
}

export function createRollbackFold(events: Iterable<StoredEvent>, definition: WorkflowDefinition): RollbackFold {
  const pending: PendingRollback[] = [];
  let failure: RollbackFailure | null = null;
  const active = hasRollbacks(definition);
  const settle = (seq: number) => {
    const index = pending.findIndex((entry) => entry.completedSeq === seq);
    if (index >= 0) pending.splice(index, 1);
  };
  const fold: RollbackFold = {
    get next() {
      return pending[pending.length - 1] ?? null;
    },
    get failure() {
      return failure;
    },
    pendingAt: (seq) => pending.find((entry) => entry.completedSeq === seq),
    apply(event) {
      if (!active) return;
      switch (event.type) {
        case "step_completed": {
          const step = stepNamed(definition, event.payload.step);
          if (
            event.payload.copied_from_seq === undefined &&
            step !== undefined &&
            Object.hasOwn(definition.rollback, step)
          )
            pending.push({ step, completedSeq: event.seq, output: event.payload.writes });
          return;
        }
        case "step_failed": {
          const { step, attempt, reason, retryable, error } = event.payload;
          const maxAttempts = stepPolicy(definition, step).maxAttempts;
          if (retryable && attempt < maxAttempts) return;
          failure = {
            step,
            reason,
            cause: attempt >= maxAttempts ? "attempts_exhausted" : "non_retryable",
            ...(error === undefined ? {} : { error }),
          };
          return;
        }
        case "cancel_requested":
          failure = { reason: event.payload.reason, cause: "cancelled" };
          return;
        case "rollback_completed":
          settle(event.payload.completed_seq);
          return;
        case "rollback_failed":
          if (!event.payload.retryable || event.payload.attempt >= definition.rollbackPolicy.maxAttempts)
            settle(event.payload.completed_seq);
          return;
        default:
          return;
      }
    },
  };
  for (const event of events) fold.apply(event);
  return fold;
}

/** The steps a run rolled back (in the order it did) and those whose rollback failed for good, from its log. */
export function rollbacksOf(events: readonly StoredEvent[]): { rolledBack: string[]; rollbackFailed: string[] } {
  const rolledBack: string[] = [];
  const rollbackFailed: string[] = [];
  for (const event of events) {
    if (event.type === "rollback_completed") rolledBack.push(event.payload.step);
    else if (event.type === "rollback_failed" && !event.payload.retryable) rollbackFailed.push(event.payload.step);
  }
  return { rolledBack, rollbackFailed };
}

export interface RollbackAttemptFailure {
  reason: string;
  /** Whether the error itself may be retried (false for NonRetryableError). */
  errorRetryable: boolean;
  at: number;
  error?: unknown;
}

/** rollback_failed for the attempt `started` claimed; retryable while the rollback policy allows another attempt. */
export function rollbackFailureEvent(
  definition: WorkflowDefinition,
  started: StoredEventOf<"rollback_started">,
  failure: RollbackAttemptFailure,
  previous: Pick<StoredEvent, "runId" | "workflowId" | "seq"> = started,
): StoredEvent {
  const { step, attempt, completed_seq } = started.payload;
  const reason =
    failure.reason.length <= MAX_REASON_LENGTH ? failure.reason : `${failure.reason.slice(0, MAX_REASON_LENGTH - 1)}…`;
  return nextEvent(previous, {
    type: "rollback_failed",
    payload: {
      step,
      attempt,
      completed_seq,
      reason,
      retryable: failure.errorRetryable && attempt < definition.rollbackPolicy.maxAttempts,
      ...("error" in failure ? { error: errorToJSON(failure.error, STEP_ERROR_LIMITS) } : {}),
    },
    at: failure.at,
  });
}
