import { PlatformError } from "../core/errors.ts";
import { isTerminalEvent, type StoredEvent } from "./events.ts";
import type { RunStatus, SeqTaken } from "./store.ts";

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
 * writer got there first (spec rule 3: a race, not an error), and null when
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
  // Another executor already wrote this seq: the caller lost the race (spec rule 3).
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
 * Status of a run whose last event is `last` and whose status before it was `before`
 * (an event_received changes no status: a queued run sent an event stays queued).
 */
export function statusAfter(last: StoredEvent, before: RunStatus = "running"): RunStatus {
  switch (last.type) {
    case "workflow_completed":
      return "completed";
    case "workflow_failed":
      return "failed";
    case "workflow_cancelled":
      return "cancelled";
    case "workflow_created":
      return last.payload.queued ? "queued" : "running";
    case "start_replaced":
      return "queued";
    case "event_received":
      return before;
    default:
      return "running";
  }
}

/** The status of a run with these events (seq order). */
export function statusOf(events: readonly StoredEvent[]): RunStatus {
  let status: RunStatus = "running";
  for (const event of events) status = statusAfter(event, status);
  return status;
}
