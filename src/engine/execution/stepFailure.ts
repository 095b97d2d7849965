import { type ErrorJSONLimits, errorToJSON } from "../../core/errors.ts";
import { stepPolicy, type WorkflowDefinition } from "../api/definition.ts";
import { nextEvent, type StoredEvent, type StoredEventOf } from "./events.ts";

/** The reason recorded when an attempt outlives `stepTimeoutMS` (also recovery's reason `timeout`). */
export const TIMEOUT_REASON = "timeout";

/**
 * The reason recorded at once for an attempt whose executor
 * is known to be gone (a restarted actor, a restarted Node process) instead of
 * waiting out `stepTimeoutMS`. Retryable like a timeout.
 */
export const INTERRUPTED_REASON = "interrupted";

/** Reasons are cut here so a huge error message cannot push an event over the payload limit. */
export const MAX_REASON_LENGTH = 4000;

/**
 * How much of a thrown error step_failed's `error` keeps: a name (and code)
 * of at most 200 characters, a message of at most 4,000 (as `reason`), the
 * raw stack up to 16 KiB (16,384 characters: its top frames), and up to 3
 * causes, each bounded the same way. Cut texts end with "…". At most about
 * 82,000 characters in all, well under the 1 MiB event limit.
 */
export const STEP_ERROR_LIMITS: ErrorJSONLimits = { name: 200, message: MAX_REASON_LENGTH, stack: 16_384, causes: 3 };

export interface StepFailure {
  step: string;
  attempt: number;
  reason: string;
  /** Whether the error itself may be retried (false for NonRetryableError and engine validation errors). */
  errorRetryable: boolean;
  maxAttempts: number;
  at: number;
  /** The delay the error asked for before the next attempt (RetryAfterError, rate_limited); the backoff otherwise. */
  retryAfterMS?: number;
  /** What the attempt threw (or the engine's error for what it returned); absent when nothing was thrown. */
  error?: unknown;
  /** The run has completed steps to roll back (rollback.ts): a final failure is not followed by workflow_failed yet. */
  rollsBack?: boolean;
}

/**
 * The events that record a failed attempt, following the event at `previous`
 * (normally its step_started): step_failed, plus workflow_failed in the same
 * batch when the run ends (so no run is ever half terminal), unless it
 * rolls back first (rollback.ts). `retryable` in step_failed says
 * whether the step will be attempted again.
 */
export function stepFailureEvents(
  previous: Pick<StoredEvent, "runId" | "workflowId" | "seq">,
  failure: StepFailure,
): StoredEvent[] {
  const willRetry = failure.errorRetryable && failure.attempt < failure.maxAttempts;
  const reason = truncateReason(failure.reason);
  const failed = nextEvent(previous, {
    type: "step_failed",
    payload: {
      step: failure.step,
      attempt: failure.attempt,
      reason,
      retryable: willRetry,
      ...(willRetry && failure.retryAfterMS !== undefined ? { retry_at: failure.at + failure.retryAfterMS } : {}),
      ...("error" in failure ? { error: errorToJSON(failure.error, STEP_ERROR_LIMITS) } : {}),
    },
    at: failure.at,
  });
  if (willRetry || failure.rollsBack === true) return [failed];
  const cause = failure.errorRetryable ? "attempts_exhausted" : "non_retryable";
  return [failed, nextEvent(failed, { type: "workflow_failed", payload: { reason, cause }, at: failure.at })];
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

/** Why and when an attempt was abandoned, after which event, and whether completions are to be rolled back. */
export interface AbandonedAttempt {
  at: number;
  reason: typeof TIMEOUT_REASON | typeof INTERRUPTED_REASON;
  /** The log's last event; the step_started itself when left out. */
  previous?: Pick<StoredEvent, "runId" | "workflowId" | "seq">;
  rollsBack?: boolean;
}

/**
 * A retryable failure for a step_started whose attempt was abandoned: it
 * outlived `stepTimeoutMS` (TIMEOUT_REASON, written by recovery and executors)
 * or its executor died with the previous host instance (INTERRUPTED_REASON).
 * `previous` is the log's last event: the step_started itself, or an
 * event_received that arrived during the step.
 */
export function abandonedAttemptEvents(
  started: StoredEventOf<"step_started">,
  definition: WorkflowDefinition,
  { at, reason, previous = started, rollsBack = false }: AbandonedAttempt,
): StoredEvent[] {
  return stepFailureEvents(previous, {
    rollsBack,
    step: started.payload.step,
    attempt: started.payload.attempt,
    reason,
    errorRetryable: true,
    maxAttempts: stepPolicy(definition, started.payload.step).maxAttempts,
    at,
  });
}
