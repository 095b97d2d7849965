import type { ErrorJSON } from "../core/errors.ts";
import { statusOf } from "./appendRules.ts";
import { type Continuation, decodeContinuation } from "./continuation.ts";
import type { StoredEvent, WorkflowEventPayloads, WorkflowEventType, WorkflowFailureCause } from "./events.ts";
import type { JsonValue } from "./json.ts";
import { lastStateEvent } from "./receivedEvents.ts";
import type { RunStatus } from "./store.ts";

/**
 * One event as `workflow.get` shows it: the stored payload exactly, and
 * (beyond the spec) beside a step_completed's payload its `continuation`
 * decoded (see continuation.ts), so readers need not decode the payload's
 * fields themselves.
 */
export type RunEventView = {
  [T in WorkflowEventType]: {
    seq: number;
    type: T;
    payload: WorkflowEventPayloads[T];
    at: number;
  } & (T extends "step_completed" ? { continuation: Continuation } : unknown);
}[WorkflowEventType];

/** What `workflow.get(runId)` returns (design: public contract). Times are epoch ms. */
export interface WorkflowRunView {
  id: string;
  workflowId: string;
  name: string;
  status: RunStatus;
  /** Present when status is "completed". */
  result?: JsonValue;
  /** The failure reason, present when status is "failed". */
  error?: string;
  /** Beyond the spec: the reason given to `workflow.cancel`, present when status is "cancelled". */
  cancelReason?: string;
  /** Beyond the spec: while the run sleeps before its next step, when it wakes (epoch ms). */
  wakeAt?: number;
  /** Beyond the spec: while the run waits for an event, its name and, when it has one, the timeout (epoch ms). */
  waitingFor?: { name: string; timeoutAt?: number };
  /**
   * Beyond the spec: while the run is queued (flow control), the key it is counted under and what it
   * waits for, in words (the backend that holds the queue says more: how many are ahead, when it may start).
   */
  queued?: QueuedRunView;
  /** Beyond the spec: the idempotency key it was started with, and until when (epoch ms) a start with it answers this run. */
  idempotency?: { key: string; until: number };
  createdAt: number;
  updatedAt: number;
  events: RunEventView[];
}

/** What a queued run waits for (see `WorkflowRunView.queued`). */
export interface QueuedRunView {
  key: string;
  waitsFor: string;
  /** Runs of its key queued before it. */
  ahead?: number;
  /** The earliest it may start (epoch ms), when time decides it: a throttle's period or a debounce's quiet period. */
  notBefore?: number;
}

/** Folds a run's events (seq order) into its view; null for an empty log. */
export function describeRun(events: readonly StoredEvent[]): WorkflowRunView | null {
  const first = events[0];
  const last = events[events.length - 1];
  if (!first || !last || first.type !== "workflow_created") return null;
  const view: WorkflowRunView = {
    id: first.runId,
    workflowId: first.workflowId,
    name: first.payload.workflowName,
    status: statusOf(events),
    createdAt: first.at,
    updatedAt: last.at,
    events: events.map(eventView),
  };
  if (last.type === "workflow_completed") view.result = last.payload.result;
  if (last.type === "workflow_failed") view.error = last.payload.reason;
  if (last.type === "workflow_cancelled") view.cancelReason = last.payload.reason;
  const { flow_key, idempotency_key, idempotent_until } = first.payload;
  if (idempotency_key !== undefined && idempotent_until !== undefined)
    view.idempotency = { key: idempotency_key, until: idempotent_until };
  if (view.status === "queued" && flow_key !== undefined)
    view.queued = { key: flow_key, waitsFor: `its turn among the queued runs of key ${JSON.stringify(flow_key)}` };
  const state = lastStateEvent(events);
  if (state?.type === "step_completed") {
    const next = decodeContinuation(state.payload);
    if (next.kind === "sleep") view.wakeAt = next.until;
    if (next.kind === "wait_for_event")
      view.waitingFor = next.until === undefined ? { name: next.event } : { name: next.event, timeoutAt: next.until };
  }
  return view;
}

function eventView({ seq, type, payload, at }: StoredEvent): RunEventView {
  if (type === "step_completed") return { seq, type, payload, at, continuation: decodeContinuation(payload) };
  return { seq, type, payload, at } as RunEventView;
}

/**
 * How a finished run ended: what `run.result()` resolves with or rejects with.
 * A failed run's `stepError` (beyond the spec) is the error of the step_failed
 * that ended it, when the step threw one: `run.result()` rejects with it as
 * the rejection's `cause`.
 */
export type RunOutcome =
  | { status: "completed"; result: JsonValue }
  | { status: "failed"; error: string; cause?: WorkflowFailureCause; stepError?: ErrorJSON }
  | { status: "cancelled"; reason: string };

/**
 * The outcome a run's terminal event records; null when `last` is not
 * terminal. `failedStep`: for a workflow_failed, the run's last step_failed
 * (normally the event before it, written in the same batch).
 */
export function outcomeOf(last: StoredEvent, failedStep?: StoredEvent): RunOutcome | null {
  if (last.type === "workflow_completed") return { status: "completed", result: last.payload.result };
  if (last.type === "workflow_failed") {
    const stepError = failedStep?.type === "step_failed" ? failedStep.payload.error : undefined;
    return {
      status: "failed",
      error: last.payload.reason,
      cause: last.payload.cause,
      ...(stepError === undefined ? {} : { stepError }),
    };
  }
  if (last.type === "workflow_cancelled") return { status: "cancelled", reason: last.payload.reason };
  return null;
}

/** The outcome of a finished run's view (as `workflow.get` or a backend's `waitForTerminal` returns it). */
export function outcomeOfView(view: WorkflowRunView): RunOutcome {
  if (view.status === "completed") return { status: "completed", result: view.result ?? null };
  if (view.status === "cancelled") return { status: "cancelled", reason: view.cancelReason ?? "cancelled" };
  const failed = view.events[view.events.length - 1];
  const failedStep = view.events.findLast((event) => event.type === "step_failed");
  const stepError = failedStep?.type === "step_failed" ? failedStep.payload.error : undefined;
  return {
    status: "failed",
    error: view.error ?? `Workflow run "${view.id}" failed`,
    cause: failed?.type === "workflow_failed" ? failed.payload.cause : undefined,
    ...(stepError === undefined ? {} : { stepError }),
  };
}
