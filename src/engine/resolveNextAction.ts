import { FIRST_STEP } from "./definition.ts";
import type { StoredEvent, WorkflowFailureCause } from "./events.ts";

/** What the engine does next for a run, decided from its last event alone (spec rule 1). */
export type NextAction =
  | { kind: "start_step"; step: string; attempt: number }
  /**
   * Write workflow_completed. Only reachable when a step_completed without
   * next_step is the last event (stuck_terminal): normally that event and
   * workflow_completed are written in one batch. The step's result is not
   * part of step_completed's payload, so the repaired run completes with
   * `result: null`.
   */
  | { kind: "complete"; result: null }
  /** Write workflow_failed: the last step_failed ends the run but its terminal event is missing (stuck_terminal). */
  | { kind: "fail"; reason: string; cause: WorkflowFailureCause }
  /** Nothing to do: no run, a terminal run, or a step in flight (step_started). */
  | { kind: "none" };

/**
 * The spec's transition table as a pure function.
 * `maxAttempts` (the definition's) decides whether a retryable failure may be
 * attempted again; a step_failed that says retryable on its last allowed
 * attempt (e.g. maxAttempts lowered since) therefore ends the run.
 */
export function resolveNextAction(last: StoredEvent | null, maxAttempts: number): NextAction {
  if (last === null) return { kind: "none" };
  switch (last.type) {
    case "workflow_created":
      return { kind: "start_step", step: FIRST_STEP, attempt: 1 };
    case "step_started":
      return { kind: "none" };
    case "step_completed":
      return last.payload.next_step === undefined
        ? { kind: "complete", result: null }
        : { kind: "start_step", step: last.payload.next_step, attempt: 1 };
    case "step_failed": {
      const { step, attempt, reason, retryable } = last.payload;
      if (retryable && attempt < maxAttempts) return { kind: "start_step", step, attempt: attempt + 1 };
      // A non-retryable event cannot say whether the error was fatal or the attempts ran out; the count can.
      return { kind: "fail", reason, cause: attempt >= maxAttempts ? "attempts_exhausted" : "non_retryable" };
    }
    case "workflow_completed":
    case "workflow_failed":
      return { kind: "none" };
  }
}
