import { PlatformError } from "../../core/errors.ts";
import { FIRST_STEP } from "../api/definition.ts";
import { decodeContinuation } from "./continuation.ts";
import { isControlEvent, isTerminalEvent, type StoredEvent } from "./events.ts";
import type { RunStatus, SeqTaken } from "../storage/store.ts";

/**
 * The checks every event store makes before an append, given what it knows
 * about the run (its workflowId, last seq and whether it is terminal).
 * Shared so the in-memory, node:sqlite and Durable Object stores refuse the
 * same batches with the same codes.
 */
export interface RunTail {
  workflowId: string;
  lastSeq: number;
  terminal: boolean;
}

/** Groups a batch by run, in order, after checking the parts that need no store. */
export function groupBatch(events: StoredEvent[]): Map<string, StoredEvent[]> {
  const byRun = new Map<string, StoredEvent[]>();
  for (const event of events) {
    if (event.type === "workflow_created") {
      throw new PlatformError(
        "internal",
        `workflow_created for run "${event.runId}" must go through createRunIfNoActive, not append`,
      );
    }
    const list = byRun.get(event.runId);
    if (list) list.push(event);
    else byRun.set(event.runId, [event]);
  }
  return byRun;
}

/**
 * Checks a batch of one run against what follows `tail`: throws the store's
 * error for a batch that breaks a rule, answers the taken seq when another
 * writer got there first (a race, not an error), and null when
 * the batch may be appended.
 */
export function checkRunBatch(runId: string, tail: RunTail | null, batch: StoredEvent[]): SeqTaken | null {
  if (tail === null)
    throw new PlatformError(
      "not_found",
      `Workflow run "${runId}" does not exist; events can only be appended to a created run`,
    );
  const first = batch[0];
  if (!first) return null;
  for (const event of batch) {
    if (event.workflowId !== tail.workflowId) {
      throw new PlatformError(
        "workflow_id_mismatch",
        `Event seq ${event.seq} of run "${runId}" has workflow id "${event.workflowId}" but the run belongs to "${tail.workflowId}"`,
        { runId, expected: tail.workflowId, got: event.workflowId },
      );
    }
  }
  // Another executor already wrote this seq: the caller lost the race.
  if (first.seq <= tail.lastSeq) return { runId, seq: first.seq };
  if (tail.terminal)
    throw new PlatformError("conflict", `Run "${runId}" is already terminal; nothing may follow its terminal event`, {
      runId,
    });
  batch.forEach((event, index) => {
    if (event.seq !== tail.lastSeq + 1 + index) {
      throw new PlatformError(
        "internal",
        `Events of run "${runId}" must continue at seq ${tail.lastSeq + 1 + index} without gaps, got ${event.seq}`,
      );
    }
  });
  batch.slice(0, -1).forEach((event) => {
    if (isTerminalEvent(event))
      throw new PlatformError("internal", `A terminal event of run "${runId}" must be the last one of its batch`);
  });
  return null;
}

/**
 * What a batch changes in its run's summary (undefined: unchanged): the
 * status (queued, dequeued, parked on its children, claimed, ended, paused
 * or resumed; an event_received or child_finished changes none: a queued run
 * sent an event stays queued, and a parent whose last child ended is woken
 * by that end and is `running` again when it claims its next step), the
 * position (the step the run is in or will claim next; a run that ended
 * keeps the step it ended in), the failure reason, and when it ended. Every
 * store folds its batches through this, so their summaries agree.
 */
export interface SummaryChange {
  status?: RunStatus;
  step?: string;
  error?: string;
  endedAt?: number;
}

/**
 * What a store knows of a run before a batch, read only when the batch's
 * change depends on it (a step that starts children while the run is paused,
 * a resume): its status, and its state (its last event other than a control
 * event). Absent for a batch that begins with workflow_created.
 */
export interface RunBefore {
  status(): RunStatus;
  state(): StoredEvent | null;
}

/**
 * Whether a run whose state is `state` is parked on its children: its last
 * step started children and it has not claimed the step after them.
 */
export function isParkedOnChildren(state: StoredEvent | null): boolean {
  return state?.type === "step_completed" && decodeContinuation(state.payload).kind === "children";
}

export function summaryChange(batch: readonly StoredEvent[], before?: RunBefore): SummaryChange {
  const change: SummaryChange = {};
  let state: StoredEvent | null | undefined;
  const status = () => change.status ?? before?.status() ?? "running";
  for (const event of batch) {
    switch (event.type) {
      case "workflow_created":
        change.status = event.payload.queued ? "queued" : "running";
        change.step = FIRST_STEP;
        break;
      case "start_replaced":
        change.status = "queued";
        break;
      case "workflow_dequeued":
        change.status = "running";
        break;
      case "step_started":
        change.status = "running";
        change.step = event.payload.step;
        break;
      case "step_failed":
        change.step = event.payload.step;
        break;
      case "step_completed":
        change.step = event.payload.next_step ?? event.payload.step;
        // A step in flight when the run was paused commits without resuming it.
        if (isParkedOnChildren(event) && status() !== "paused") change.status = "waiting";
        break;
      case "workflow_paused":
        change.status = "paused";
        break;
      case "workflow_resumed":
        change.status = isParkedOnChildren(state === undefined ? (before?.state() ?? null) : state)
          ? "waiting"
          : "running";
        break;
      case "workflow_completed":
        change.status = "completed";
        change.endedAt = event.at;
        break;
      case "workflow_failed":
        change.status = "failed";
        change.error = event.payload.reason;
        change.endedAt = event.at;
        break;
      case "workflow_cancelled":
        change.status = "cancelled";
        change.endedAt = event.at;
        break;
      // A run rolling back is still running: its failure is final only with workflow_failed.
      case "rollback_started":
      case "rollback_completed":
      case "rollback_failed":
      case "cancel_requested":
      case "event_received":
      case "child_finished":
        break;
    }
    if (!isControlEvent(event)) state = event;
  }
  return change;
}

/** The status, position and failure of a run whose whole log is `events`. */
export function summaryOf(
  events: readonly StoredEvent[],
): Required<Pick<SummaryChange, "status" | "step">> & SummaryChange {
  return { status: "running", step: FIRST_STEP, ...summaryChange(events) };
}
