import { PlatformError } from "../../core/errors.ts";
import { summaryOf } from "../execution/appendRules.ts";
import { nextEvent, START_DATA_KEY, type StoredEvent } from "../execution/events.ts";
import { encodePayload, toJsonValue, type JsonValue } from "../api/json.ts";
import type { WorkflowEventStore } from "../storage/store.ts";

/**
 * The two writes a queue makes to its runs (flow control): starting a queued run
 * (workflow_dequeued) and replacing a queued run's start data (start_replaced, debounce). Each
 * appends only while the run is queued and answers whether it did: a run that started or ended
 * meanwhile is left as it is. A seq lost to a concurrent writer (an event sent, a cancel) is read
 * back and the check made again.
 */

/** Starts a queued run: appends workflow_dequeued. False when the run is not queued (any more). */
export function dequeueRun(store: WorkflowEventStore, runId: string, now: number): boolean {
  return appendWhileQueued(store, runId, (last) =>
    nextEvent(last, { type: "workflow_dequeued", payload: {}, at: now }),
  );
}

/** Replaces a queued run's start data: appends start_replaced. False when the run is not queued (any more). */
export function replaceQueuedData(store: WorkflowEventStore, runId: string, data: unknown, now: number): boolean {
  const writes = { [START_DATA_KEY]: toJsonValue(data === undefined ? null : data, "start data") as JsonValue };
  encodePayload({ writes }, "Start data");
  return appendWhileQueued(store, runId, (last) =>
    nextEvent(last, { type: "start_replaced", payload: { writes }, at: now }),
  );
}

const MAX_TRIES = 5;

function appendWhileQueued(
  store: WorkflowEventStore,
  runId: string,
  next: (last: StoredEvent) => StoredEvent,
): boolean {
  for (let tries = 0; tries < MAX_TRIES; tries++) {
    const events = store.events(runId);
    const last = events[events.length - 1];
    if (!last) throw new PlatformError("not_found", `Workflow run "${runId}" does not exist`);
    if (summaryOf(events).status !== "queued") return false;
    if (store.append([next(last)]).appended) return true;
  }
  throw new PlatformError("conflict", `Workflow run "${runId}" kept changing while its queue wrote to it; try again`);
}
