import { PlatformError } from "../core/errors.ts";
import type { WorkflowDefinition } from "./definition.ts";
import { isTerminalEvent, nextEvent, type StoredEvent } from "./events.ts";
import { resolveNextAction } from "./resolveNextAction.ts";
import { timeoutEvents } from "./stepFailure.ts";
import type { WorkflowEventStore } from "./store.ts";

/** The spec's stuck-state conditions. */
export type RecoveryReason = "timeout" | "stuck_created" | "stuck_completed" | "stuck_failed" | "stuck_terminal";

export interface RecoveryInput {
  /**
   * True while this adapter is itself driving the run (an execution in
   * progress or a wake-up timer pending). Such a run is never stuck: its
   * executor records its own timeouts and retries.
   */
  executingHere: boolean;
}

/**
 * Which stuck state, if any, a run whose last event is `last` is in at `now`.
 * A retryable step_failed counts as stuck_failed even before its retry time:
 * nobody is driving it, so it must be handed to an executor, which then waits
 * out the backoff.
 */
export function detectRecovery(
  last: StoredEvent | null,
  definition: WorkflowDefinition,
  now: number,
  input: RecoveryInput,
): RecoveryReason | null {
  if (last === null || input.executingHere) return null;
  switch (last.type) {
    case "workflow_created":
      return "stuck_created";
    case "step_started":
      return now >= last.at + definition.stepTimeoutMS ? "timeout" : null;
    case "step_completed":
      return last.payload.next_step === undefined ? "stuck_terminal" : "stuck_completed";
    case "step_failed":
      return resolveNextAction(last, definition.maxAttempts).kind === "start_step" ? "stuck_failed" : "stuck_terminal";
    case "workflow_completed":
    case "workflow_failed":
      return null;
  }
}

export interface RecoveryOutcome {
  reason: RecoveryReason | null;
  /** Events recovery wrote (the timeout failure, or the missing terminal event). */
  appended: StoredEvent[];
  /** True when the adapter should start an execution of the run now. */
  reenqueue: boolean;
}

/**
 * Detects and repairs one run:
 * - timeout: writes step_failed{reason "timeout"} (+ workflow_failed in the
 *   same batch when attempts are exhausted); re-enqueues unless terminal;
 * - stuck_terminal: writes the missing workflow_completed/workflow_failed;
 * - stuck_created / stuck_completed / stuck_failed: asks for a re-enqueue.
 * If another executor moves the run while we repair (seq_conflict), the run is
 * alive: nothing is written and an execution is requested to look at it.
 */
export function recoverRun(
  store: WorkflowEventStore,
  definition: WorkflowDefinition,
  runId: string,
  now: number,
  input: RecoveryInput,
): RecoveryOutcome {
  const last = store.lastEvent(runId);
  const reason = detectRecovery(last, definition, now, input);
  if (reason === null || last === null) return { reason: null, appended: [], reenqueue: false };
  let repair: StoredEvent[] = [];
  if (reason === "timeout" && last.type === "step_started") repair = timeoutEvents(last, definition, now);
  if (reason === "stuck_terminal") {
    const action = resolveNextAction(last, definition.maxAttempts);
    if (action.kind === "complete") repair = [nextEvent(last, "workflow_completed", { result: action.result }, now)];
    if (action.kind === "fail")
      repair = [nextEvent(last, "workflow_failed", { reason: action.reason, cause: action.cause }, now)];
  }
  if (repair.length === 0) return { reason, appended: [], reenqueue: true };
  try {
    store.append(repair);
  } catch (error) {
    if (error instanceof PlatformError && error.code === "seq_conflict")
      return { reason, appended: [], reenqueue: true };
    throw error;
  }
  const lastWritten = repair[repair.length - 1] as StoredEvent;
  return { reason, appended: repair, reenqueue: !isTerminalEvent(lastWritten) };
}
