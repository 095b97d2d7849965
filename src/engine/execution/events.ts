import type { ErrorJSON } from "../../core/errors.ts";
import type { JsonValue } from "../api/json.ts";

/**
 * The six core event types, plus seven this platform adds: `event_received`
 * (an event sent to the run with `workflow.send`), `workflow_cancelled` (the
 * terminal event `workflow.cancel` writes), `workflow_paused` /
 * `workflow_resumed` (`workflow.pause` / `workflow.resume`), `child_finished`
 * (a child run the run started has ended, see children.ts), and for runs
 * under flow control (flowControl.ts) `start_replaced` (a debounced start
 * replaced a queued run's data) and `workflow_dequeued` (a queued run got its
 * turn), and for a workflow with rollback handlers (rollback.ts)
 * `rollback_started`, `rollback_completed` and `rollback_failed`, each
 * undoing one completed step after the run failed (or, with `rollbackOnCancel`,
 * after `cancel_requested`: a cancel that rolls back before it ends the run). Every state change of a run is one of these, appended to the run's
 * log; the state of a run is its last event other than the control events
 * (`event_received`, which only queues a delivery, `child_finished`, which
 * only records a child's outcome for a later step, and the pause and resume
 * marks: see {@link isControlEvent}).
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
  "workflow_paused",
  "workflow_resumed",
  "start_replaced",
  "workflow_dequeued",
  "child_finished",
  "rollback_started",
  "rollback_completed",
  "rollback_failed",
  "cancel_requested",
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
 * The wire contract's payload fields per event type, plus the optional fields
 * this platform adds for sleeps, waits and retry-after (absent otherwise).
 */
export interface WorkflowEventPayloads {
  /**
   * `writes` holds the start data under {@link START_DATA_KEY}. `version`, the project's
   * version whose code started the run (`v1`, `v2`, …; absent where the host has none, e.g. in tests),
   * `rerunOf` when `workflow.rerun` made the run (`fromStep` when it began there), `flow_key` when the
   * workflow has flow control (the key its starts are counted under), `queued: true` when the run waits
   * for its turn (a workflow_dequeued starts it), and `idempotency_key` with `idempotent_until` (epoch ms)
   * when it was started with an idempotency key; `parent_run_id`: the run whose step started this one as a
   * child (it tells that run when it ends); `flow_priority` and `flow_fairness`: its rank among its flow
   * key's queued runs, when not the default (priority 5, no fairness value).
   */
  workflow_created: {
    workflowName: string;
    writes: Writes;
    version?: string;
    rerunOf?: RerunOf;
    flow_key?: string;
    flow_priority?: number;
    flow_fairness?: string;
    queued?: true;
    idempotency_key?: string;
    idempotent_until?: number;
    parent_run_id?: string;
    /** A child's nesting depth (its parent's + 1; absent: a run no step started). */
    child_depth?: number;
  };
  /** `event_seq`: the seq of the event_received this step runs with (`ctx.event`), on every attempt. */
  step_started: { step: string; attempt: number; event_seq?: number };
  /**
   * `next_step` is absent when the step finished the workflow. This platform adds:
   * `wake_at` (epoch ms) when the next step sleeps until then; `waiting_for`
   * (an event name) and `timeout_at` (epoch ms, optional) when it waits for an event (`waiting_for_run`,
   * a run id, instead of `waiting_for` when it waits for that run to end); `children` when
   * it started child runs and the next step waits for all of them (see children.ts);
   * `copied_from_seq` on the completed steps a rerun begins with (`workflow.rerun(runId, { fromStep })`):
   * the seq of this completion in the original run (named by workflow_created's `rerunOf`).
   */
  step_completed: {
    step: string;
    writes: Writes;
    next_step?: string;
    wake_at?: number;
    waiting_for?: string;
    waiting_for_run?: string;
    timeout_at?: number;
    children?: ChildEntry[];
    copied_from_seq?: number;
  };
  /**
   * `retryable` is true when this step will be attempted again (the error was retryable and attempts remain).
   * `retry_at` (epoch ms): the next attempt's time when the step asked for it (RetryAfterError, rate_limited) instead of the backoff.
   * `error`: what the attempt threw (or the engine's error for what it returned), as it was:
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
  /** What `workflow.send(runId, name, payload)` appended. */
  event_received: {
    name: string;
    payload: JsonValue;
    /** "callback": a POST to a callback URL (`ctx.callbackURL`) delivered it; absent: `workflow.send`. */
    via?: "callback";
    /** The callback URL's id (its token's `jti`): spent by this event, so the URL delivers once. */
    callback?: string;
  };
  /** Terminal, written by `workflow.cancel(runId, reason)`. */
  workflow_cancelled: { reason: string };
  /** `workflow.pause(runId, reason)`: no new step is claimed until workflow_resumed. */
  workflow_paused: { reason: string };
  /** `workflow.resume(runId)`: the run goes on from where it was. */
  workflow_resumed: Record<string, never>;
  /** A debounced start replaced the start data of the queued run (`writes.data`). */
  start_replaced: { writes: Writes };
  /** The queued run left its queue; its first step starts now. */
  workflow_dequeued: Record<string, never>;
  /**
   * A child run this run started has ended. `error` is the
   * failure reason of a failed child, the cancel reason of a cancelled one.
   */
  /**
   * A rollback handler (rollback.ts) claimed to undo the completion at `completed_seq` (a step_completed
   * of `step`); like step_started, one per attempt.
   */
  rollback_started: { step: string; attempt: number; completed_seq: number };
  /** The rollback of the completion at `completed_seq` ran to its end; it is never run again. */
  rollback_completed: { step: string; completed_seq: number };
  /**
   * An attempt of a rollback handler failed: `retryable` says whether it will be attempted again; when
   * false, the run records it in `rollbackFailed` and goes on with the next rollback. `error` as in step_failed.
   */
  rollback_failed: {
    step: string;
    attempt: number;
    completed_seq: number;
    reason: string;
    retryable: boolean;
    error?: ErrorJSON;
  };
  /**
   * `workflow.cancel` of a run of a workflow with `rollbackOnCancel` that has completed steps to roll back: the
   * rollbacks run, then workflow_cancelled with this reason ends the run. Not terminal, and not a control event:
   * a step in flight loses its commit to it, as to a cancel.
   */
  cancel_requested: { reason: string };
  child_finished: {
    run_id: string;
    workflow: string;
    status: "completed" | "failed" | "cancelled";
    result?: JsonValue;
    error?: string;
  };
}

/**
 * One child a step started, as its step_completed records it: the child's run
 * id and workflow name. `refused` (the child never started): why, e.g. its
 * `id` was held by an active run that is not this parent's child (that run's
 * id is then `run_id`).
 */
export interface ChildEntry {
  run_id: string;
  workflow: string;
  refused?: string;
}

/** What a rerun's workflow_created says it reran: the original run, and the step it began from (absent: from the start). */
export interface RerunOf {
  runId: string;
  fromStep?: string;
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

/**
 * Events that change nothing a step sees or the resolver decides from: an
 * event sent to the run (it only queues a delivery), a child's outcome (it
 * only records something a later step reads) and the pause and resume marks
 * (they only gate whether a new step may be claimed). Others append them
 * whatever the run is doing. A run's state is its last event other than
 * these, and a commit that lost its seq to these alone is appended after them.
 */
export const CONTROL_EVENT_TYPES = [
  "event_received",
  "child_finished",
  "workflow_paused",
  "workflow_resumed",
] as const satisfies readonly WorkflowEventType[];
export type ControlEventType = (typeof CONTROL_EVENT_TYPES)[number];

export function isControlEvent(event: StoredEvent): event is StoredEventOf<ControlEventType> {
  return (CONTROL_EVENT_TYPES as readonly WorkflowEventType[]).includes(event.type);
}

export function isWorkflowEventType(value: unknown): value is WorkflowEventType {
  return (WORKFLOW_EVENT_TYPES as readonly unknown[]).includes(value);
}

/** An event to follow another in the same run: its type, payload and time. */
export interface NextEventInput<T extends WorkflowEventType> {
  type: T;
  payload: WorkflowEventPayloads[T];
  at: number;
  /** How many seqs after the previous one (the n-th event of one batch appended together). */
  offset?: number;
}

/** The event that follows `previous` in the same run. */
export function nextEvent<T extends WorkflowEventType>(
  previous: Pick<StoredEvent, "runId" | "workflowId" | "seq">,
  { type, payload, at, offset = 1 }: NextEventInput<T>,
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
