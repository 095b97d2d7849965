import type { JsonValue } from "./json.ts";

/**
 * The six event types of the spec. Every state change of a run is one of
 * these, appended to the run's log; the state of a run is its last event.
 */
export const WORKFLOW_EVENT_TYPES = [
  "workflow_created",
  "step_started",
  "step_completed",
  "step_failed",
  "workflow_completed",
  "workflow_failed",
] as const;

export type WorkflowEventType = (typeof WORKFLOW_EVENT_TYPES)[number];

/** Scratchpad values committed by one event, keyed by the name passed to `ctx.write`. */
export type Writes = { readonly [key: string]: JsonValue };

/** The scratchpad key that holds the start data; `ctx.write("data", …)` is refused. */
export const START_DATA_KEY = "data";

/**
 * Why a run failed, in `workflow_failed.cause`:
 * - `non_retryable`: the step threw `NonRetryableError`, or returned something
 *   the engine cannot store (retrying the same code would fail the same way);
 * - `attempts_exhausted`: the step kept failing (or timing out) until
 *   `maxAttempts` was used up.
 */
export type WorkflowFailureCause = "non_retryable" | "attempts_exhausted";

/** Exactly the spec's payload fields per event type; nothing else is stored. */
export interface WorkflowEventPayloads {
  /** `writes` holds the start data under {@link START_DATA_KEY}. */
  workflow_created: { workflowName: string; writes: Writes };
  step_started: { step: string; attempt: number };
  /** `next_step` is absent when the step finished the workflow. */
  step_completed: { step: string; writes: Writes; next_step?: string };
  /** `retryable` is true when this step will be attempted again (the error was retryable and attempts remain). */
  step_failed: { step: string; attempt: number; reason: string; retryable: boolean };
  workflow_completed: { result: JsonValue };
  /** `reason` is the failing step's reason; it is what `run.result()` rejects with. */
  workflow_failed: { reason: string; cause: WorkflowFailureCause };
}

interface EventEnvelope {
  runId: string;
  workflowId: string;
  /** 1 for workflow_created, then +1 per event; (runId, seq) is unique. */
  seq: number;
  /** Epoch milliseconds when the event was written. */
  at: number;
}

/** One row of `_workflow_events`, as the engine sees it. */
export type StoredEvent = {
  [T in WorkflowEventType]: EventEnvelope & { type: T; payload: WorkflowEventPayloads[T] };
}[WorkflowEventType];

export type StoredEventOf<T extends WorkflowEventType> = Extract<StoredEvent, { type: T }>;

export function isTerminalEvent(event: StoredEvent): event is StoredEventOf<"workflow_completed" | "workflow_failed"> {
  return event.type === "workflow_completed" || event.type === "workflow_failed";
}

export function isWorkflowEventType(value: unknown): value is WorkflowEventType {
  return (WORKFLOW_EVENT_TYPES as readonly unknown[]).includes(value);
}

/** The event that follows `previous` in the same run. */
export function nextEvent<T extends WorkflowEventType>(
  previous: Pick<StoredEvent, "runId" | "workflowId" | "seq">,
  type: T,
  payload: WorkflowEventPayloads[T],
  at: number,
  offset = 1,
): StoredEventOf<T> {
  return {
    runId: previous.runId,
    workflowId: previous.workflowId,
    seq: previous.seq + offset,
    type,
    payload,
    at,
  } as StoredEventOf<T>;
}
