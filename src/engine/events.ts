import type { ErrorJSON } from "../core/errors.ts";
import type { JsonValue } from "./json.ts";

/**
 * The six event types of the spec, plus four beyond it: `event_received` (an
 * event sent to the run with `workflow.send`), `workflow_cancelled` (the
 * terminal event `workflow.cancel` writes), and for runs under flow control
 * (flowControl.ts) `start_replaced` (a debounced start replaced a queued run's
 * data) and `workflow_dequeued` (a queued run got its turn). Every state
 * change of a run is one of these, appended to the run's log; the state of a
 * run is its last event other than `event_received`, which only queues a
 * delivery (see receivedEvents.ts).
 */
export const WORKFLOW_EVENT_TYPES = [
  "workflow_created",
  "step_started",
  "step_completed",
  "step_failed",
  "workflow_completed",
  "workflow_failed",
  "event_received",
  "workflow_cancelled",
  "start_replaced",
  "workflow_dequeued",
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

/**
 * The spec's payload fields per event type, plus the optional fields beyond
 * the spec that sleeps, waits and retry-after need (absent otherwise).
 */
export interface WorkflowEventPayloads {
  /**
   * `writes` holds the start data under {@link START_DATA_KEY}. Beyond the spec: `flow_key` when the
   * workflow has flow control (the key its starts are counted under), `queued: true` when the run waits
   * for its turn (a workflow_dequeued starts it), and `idempotency_key` with `idempotent_until` (epoch ms)
   * when it was started with an idempotency key.
   */
  workflow_created: {
    workflowName: string;
    writes: Writes;
    flow_key?: string;
    queued?: true;
    idempotency_key?: string;
    idempotent_until?: number;
  };
  /** `event_seq` (beyond the spec): the seq of the event_received this step runs with (`ctx.event`), on every attempt. */
  step_started: { step: string; attempt: number; event_seq?: number };
  /**
   * `next_step` is absent when the step finished the workflow. Beyond the spec:
   * `wake_at` (epoch ms) when the next step sleeps until then; `waiting_for`
   * (an event name) and `timeout_at` (epoch ms, optional) when it waits for an event.
   */
  step_completed: {
    step: string;
    writes: Writes;
    next_step?: string;
    wake_at?: number;
    waiting_for?: string;
    timeout_at?: number;
  };
  /**
   * `retryable` is true when this step will be attempted again (the error was retryable and attempts remain).
   * `retry_at` (beyond the spec, epoch ms): the next attempt's time when the step asked for it (RetryAfterError, rate_limited) instead of the backoff.
   * `error` (beyond the spec): what the attempt threw (or the engine's error for what it returned), as it was:
   * name, message, code, raw stack and causes, bounded (see STEP_ERROR_LIMITS); absent when nothing was thrown
   * (a timeout, an interrupted attempt).
   */
  step_failed: {
    step: string;
    attempt: number;
    reason: string;
    retryable: boolean;
    retry_at?: number;
    error?: ErrorJSON;
  };
  workflow_completed: { result: JsonValue };
  /** `reason` is the failing step's reason; it is what `run.result()` rejects with. */
  workflow_failed: { reason: string; cause: WorkflowFailureCause };
  /** Beyond the spec: what `workflow.send(runId, name, payload)` appended. */
  event_received: { name: string; payload: JsonValue };
  /** Beyond the spec: terminal, written by `workflow.cancel(runId, reason)`. */
  workflow_cancelled: { reason: string };
  /** Beyond the spec: a debounced start replaced the start data of the queued run (`writes.data`). */
  start_replaced: { writes: Writes };
  /** Beyond the spec: the queued run left its queue; its first step starts now. */
  workflow_dequeued: Record<string, never>;
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

export type TerminalEventType = "workflow_completed" | "workflow_failed" | "workflow_cancelled";

export function isTerminalEvent(event: StoredEvent): event is StoredEventOf<TerminalEventType> {
  return event.type === "workflow_completed" || event.type === "workflow_failed" || event.type === "workflow_cancelled";
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
