import type { AwaitedRun } from "./continuation.ts";
import { DEFAULT_RANK } from "../flow/flowControl.ts";
import type { ErrorJSON } from "../../core/errors.ts";
import { summaryOf } from "./appendRules.ts";
import { type ChildOutcome, type Continuation, decodeContinuation } from "./continuation.ts";
import type { RerunOf, StoredEvent, WorkflowEventPayloads, WorkflowEventType, WorkflowFailureCause } from "./events.ts";
import type { JsonValue } from "../api/json.ts";
import { lastStateEvent } from "../control/receivedEvents.ts";
import { childOutcome, type ChildrenFold, createChildrenFold } from "../control/children.ts";
import { rollbacksOf } from "./rollback.ts";
import type { RunStatus } from "../storage/store.ts";

/**
 * One event as `workflow.get` shows it: the stored payload exactly, and
 * beside a step_completed's payload its `continuation`
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

/**
 * What `workflow.get(runId)` returns (design: public contract). Times are epoch ms.
 * @example
 * const view: WorkflowRunView | null = await workflow.get(runId);
 * if (view) console.log(view.status, view.step, view.events.length);
 */
export interface WorkflowRunView {
  id: string;
  workflowId: string;
  name: string;
  status: RunStatus;
  /** Present when status is "completed". */
  result?: JsonValue;
  /** The failure reason, present when status is "failed". */
  error?: string;
  /** The reason given to `workflow.cancel`, present when status is "cancelled". */
  cancelReason?: string;
  /** While the run sleeps before its next step, when it wakes (epoch ms). */
  wakeAt?: number;
  /** While the run waits for an event, its name and, when it has one, the timeout (epoch ms). */
  waitingFor?: { name: string; timeoutAt?: number };
  /** While the run waits for another run to end (`waitForRun`), that run's id and, when it has one, the timeout. */
  waitingForRun?: { runId: string; timeoutAt?: number };
  /**
   * The run's position, the step it is in or will claim next (once it ended, the step it
   * ended in). Always set by describeRun.
   */
  step?: string;
  /** While status is "paused", the reason given to `workflow.pause` and when. */
  paused?: { reason: string; at: number };
  /** The project version whose code started the run. */
  version?: string;
  /** The run `workflow.rerun` made this one of (and the step it began from). */
  rerunOf?: RerunOf;
  /**
   * While the run is queued (flow control), the key it is counted under and what it
   * waits for, in words (the backend that holds the queue says more: how many are ahead, when it may start).
   */
  queued?: QueuedRunView;
  /** The idempotency key it was started with, and until when (epoch ms) a start with it answers this run. */
  idempotency?: { key: string; until: number };
  /** While the run waits for its children, how many it waits for and how many have ended. */
  waitingForChildren?: { total: number; finished: number };
  /** The run whose step started this run as a child. */
  parentRunId?: string;
  /**
   * Every child run this run's steps started, in the order
   * they were asked for, with how each ended (`running` until it has).
   */
  children?: RunChildView[];
  /**
   * Once a rollback ran (rollback.ts): the steps rolled back, in the order they were, and those
   * whose rollback failed for good (present only when one did).
   */
  rolledBack?: string[];
  rollbackFailed?: string[];
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
  /** Its priority among the key's queued runs (1-10, default 5). */
  priority?: number;
  /** Its `concurrency.fairness` value, when the workflow has one. */
  fairness?: string;
}
/** A child run as its parent's view lists it. */
export type RunChildView = Omit<ChildOutcome, "status"> & { status: ChildOutcome["status"] | "running" };

/** Folds a run's events (seq order) into its view; null for an empty log. */
export function describeRun(events: readonly StoredEvent[]): WorkflowRunView | null {
  const first = events[0];
  const last = events[events.length - 1];
  if (!first || !last || first.type !== "workflow_created") return null;
  const { status, step } = summaryOf(events);
  const { version, rerunOf } = first.payload;
  const view: WorkflowRunView = {
    id: first.runId,
    workflowId: first.workflowId,
    name: first.payload.workflowName,
    status,
    step,
    ...(version === undefined ? {} : { version }),
    ...(rerunOf === undefined ? {} : { rerunOf }),
    createdAt: first.at,
    updatedAt: last.at,
    events: events.map(eventView),
  };
  if (status === "paused") {
    const pause = events.findLast((e) => e.type === "workflow_paused");
    if (pause?.type === "workflow_paused") view.paused = { reason: pause.payload.reason, at: pause.at };
  }
  if (last.type === "workflow_completed") view.result = last.payload.result;
  if (last.type === "workflow_failed") view.error = last.payload.reason;
  if (last.type === "workflow_cancelled") view.cancelReason = last.payload.reason;
  const { flow_key, idempotency_key, idempotent_until } = first.payload;
  if (idempotency_key !== undefined && idempotent_until !== undefined)
    view.idempotency = { key: idempotency_key, until: idempotent_until };
  if (view.status === "queued" && flow_key !== undefined)
    view.queued = {
      key: flow_key,
      waitsFor: `its turn among the queued runs of key ${JSON.stringify(flow_key)}`,
      priority: first.payload.flow_priority ?? DEFAULT_RANK.priority,
      ...(first.payload.flow_fairness === undefined ? {} : { fairness: first.payload.flow_fairness }),
    };
  if (first.payload.parent_run_id !== undefined) view.parentRunId = first.payload.parent_run_id;
  const fold = createChildrenFold(events);
  const children = childrenOf(events, fold);
  if (children.length > 0) view.children = children;
  const { rolledBack, rollbackFailed } = rollbacksOf(events);
  if (rolledBack.length > 0 || rollbackFailed.length > 0) view.rolledBack = rolledBack;
  if (rollbackFailed.length > 0) view.rollbackFailed = rollbackFailed;
  const state = lastStateEvent(events);
  if (state?.type === "step_completed") {
    const next = decodeContinuation(state.payload);
    if (next.kind === "sleep") view.wakeAt = next.until;
    if (next.kind === "wait_for_event" && next.run !== undefined)
      view.waitingForRun = next.until === undefined ? { runId: next.run } : { runId: next.run, timeoutAt: next.until };
    else if (next.kind === "wait_for_event")
      view.waitingFor = next.until === undefined ? { name: next.event } : { name: next.event, timeoutAt: next.until };
    const pending = next.kind === "children" && view.status === "waiting" ? fold.pending().length : 0;
    if (next.kind === "children" && pending > 0)
      view.waitingForChildren = { total: next.children.length, finished: next.children.length - pending };
  }
  return view;
}

/** Every child the run's steps started, in order, with how each ended. */
function childrenOf(events: readonly StoredEvent[], fold: ChildrenFold): RunChildView[] {
  const listed: RunChildView[] = [];
  for (const event of events) {
    if (event.type !== "step_completed") continue;
    const next = decodeContinuation(event.payload);
    if (next.kind !== "children") continue;
    for (const child of next.children) listed.push(childOutcome(child, fold.finished.get(child.runId)));
  }
  return listed;
}

function eventView({ seq, type, payload, at }: StoredEvent): RunEventView {
  if (type === "step_completed") return { seq, type, payload, at, continuation: decodeContinuation(payload) };
  return { seq, type, payload, at } as RunEventView;
}

/**
 * How a finished run ended: what `run.result()` resolves with or rejects with.
 * A failed run's `stepError` is the error of the step_failed
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
/** An ended run's view as {@link AwaitedRun}. */
export function awaitedRunOf(view: WorkflowRunView): AwaitedRun {
  const outcome = outcomeOfView(view);
  if (outcome.status === "completed") return { runId: view.id, status: "completed", result: outcome.result };
  if (outcome.status === "cancelled") return { runId: view.id, status: "cancelled", error: outcome.reason };
  return { runId: view.id, status: "failed", error: outcome.error };
}

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
