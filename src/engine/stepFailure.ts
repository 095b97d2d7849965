import type { WorkflowDefinition } from "./definition.ts";
import { nextEvent, type StoredEvent, type StoredEventOf } from "./events.ts";

/** The reason recorded when an attempt outlives `stepTimeoutMS` (spec: recovery reason `timeout`). */
export const TIMEOUT_REASON = "timeout";

/** Reasons are cut here so a huge error message cannot push an event over the payload limit. */
export const MAX_REASON_LENGTH = 4000;

export interface StepFailure {
  step: string;
  attempt: number;
  reason: string;
  /** Whether the error itself may be retried (false for NonRetryableError and engine validation errors). */
  errorRetryable: boolean;
  maxAttempts: number;
  at: number;
}

/**
 * The events that record a failed attempt, following the event at `previous`
 * (normally its step_started): step_failed, plus workflow_failed in the same
 * batch when the run ends (spec rule 2). `retryable` in step_failed says
 * whether the step will be attempted again.
 */
export function stepFailureEvents(
  previous: Pick<StoredEvent, "runId" | "workflowId" | "seq">,
  failure: StepFailure,
): StoredEvent[] {
  const willRetry = failure.errorRetryable && failure.attempt < failure.maxAttempts;
  const reason = truncateReason(failure.reason);
  const failed = nextEvent(
    previous,
    "step_failed",
    { step: failure.step, attempt: failure.attempt, reason, retryable: willRetry },
    failure.at,
  );
  if (willRetry) return [failed];
  const cause = failure.errorRetryable ? "attempts_exhausted" : "non_retryable";
  return [failed, nextEvent(failed, "workflow_failed", { reason, cause }, failure.at)];
}

/** A person-readable reason from anything a step may throw. */
export function reasonOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name || "Error";
  if (typeof error === "string") return error || "(empty error)";
  try {
    return `Non-Error thrown: ${JSON.stringify(error) ?? String(error)}`;
  } catch {
    // BigInt, cycles, or an object whose toString throws.
    try {
      return `Non-Error thrown: ${String(error)}`;
    } catch {
      return "Non-Error thrown";
    }
  }
}

function truncateReason(reason: string): string {
  return reason.length <= MAX_REASON_LENGTH ? reason : `${reason.slice(0, MAX_REASON_LENGTH - 1)}…`;
}

/** What recovery and executors write for a step_started that outlived `stepTimeoutMS`: a retryable failure with reason "timeout". */
export function timeoutEvents(
  started: StoredEventOf<"step_started">,
  definition: WorkflowDefinition,
  at: number,
): StoredEvent[] {
  return stepFailureEvents(started, {
    step: started.payload.step,
    attempt: started.payload.attempt,
    reason: TIMEOUT_REASON,
    errorRetryable: true,
    maxAttempts: definition.maxAttempts,
    at,
  });
}
