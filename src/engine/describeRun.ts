import { statusAfter } from "./appendRules.ts";
import type { StoredEvent, WorkflowEventPayloads, WorkflowEventType, WorkflowFailureCause } from "./events.ts";
import type { JsonValue } from "./json.ts";
import type { RunStatus } from "./store.ts";

/** One event as `workflow.get` shows it. */
export type RunEventView = {
  [T in WorkflowEventType]: { seq: number; type: T; payload: WorkflowEventPayloads[T]; at: number };
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
  createdAt: number;
  updatedAt: number;
  events: RunEventView[];
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
    status: statusAfter(last),
    createdAt: first.at,
    updatedAt: last.at,
    events: events.map(({ seq, type, payload, at }) => ({ seq, type, payload, at }) as RunEventView),
  };
  if (last.type === "workflow_completed") view.result = last.payload.result;
  if (last.type === "workflow_failed") view.error = last.payload.reason;
  return view;
}

/** How a finished run ended: what `run.result()` resolves with or rejects with. */
export type RunOutcome =
  | { status: "completed"; result: JsonValue }
  | { status: "failed"; error: string; cause?: WorkflowFailureCause };

/** The outcome a run's terminal event records; null when `last` is not terminal. */
export function outcomeOf(last: StoredEvent): RunOutcome | null {
  if (last.type === "workflow_completed") return { status: "completed", result: last.payload.result };
  if (last.type === "workflow_failed")
    return { status: "failed", error: last.payload.reason, cause: last.payload.cause };
  return null;
}

/** The outcome of a finished run's view (as `workflow.get` or a backend's `waitForTerminal` returns it). */
export function outcomeOfView(view: WorkflowRunView): RunOutcome {
  if (view.status === "completed") return { status: "completed", result: view.result ?? null };
  const failed = view.events[view.events.length - 1];
  return {
    status: "failed",
    error: view.error ?? `Workflow run "${view.id}" failed`,
    cause: failed?.type === "workflow_failed" ? failed.payload.cause : undefined,
  };
}
