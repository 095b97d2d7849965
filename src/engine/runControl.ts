import { PlatformError } from "../core/errors.ts";
import { checkEventName } from "./continuation.ts";
import { isTerminalEvent, nextEvent, type StoredEvent, type StoredEventOf, type WorkflowEventType } from "./events.ts";
import { encodePayload, toJsonValue } from "./json.ts";
import { MAX_REASON_LENGTH } from "./stepFailure.ts";
import type { WorkflowEventStore } from "./store.ts";

/** How often a send or cancel re-reads the tail after losing its seq to an executor before giving up. */
const MAX_APPEND_TRIES = 20;

/**
 * Beyond the spec: `workflow.send(runId, name, payload)`. Appends
 * event_received at the end of the run's log, whatever the run is doing (a
 * step in flight appends its outcome after it); the event waits there until a
 * step's `waitFor` takes it. The payload follows the JSON rule and size limit
 * of step writes. Throws `invalid_input`/`payload_too_large` for a bad event,
 * `not_found` for an unknown run and `conflict` for a finished one.
 */
export function appendReceivedEvent(
  store: WorkflowEventStore,
  runId: string,
  name: unknown,
  payload: unknown,
  now: number,
): StoredEventOf<"event_received"> {
  const eventName = checkEventName(name, "workflow.send: the event name");
  const body = {
    name: eventName,
    payload: toJsonValue(payload === undefined ? null : payload, `payload of event "${eventName}"`),
  };
  encodePayload(body, `The payload of event "${eventName}"`);
  return appendAtTail(store, runId, "event_received", body, now, "send an event to");
}

/**
 * Beyond the spec: `workflow.cancel(runId, reason)`. Appends the terminal
 * workflow_cancelled in one append: a step in flight may still finish, but
 * its outcome finds the seq taken by a terminal event and is dropped. Throws
 * `not_found` for an unknown run and `conflict` for a finished one.
 */
export function cancelRun(
  store: WorkflowEventStore,
  runId: string,
  reason: unknown,
  now: number,
): StoredEventOf<"workflow_cancelled"> {
  if (reason !== undefined && typeof reason !== "string")
    throw new PlatformError("invalid_input", "workflow.cancel: the reason must be a string");
  const text = (reason ?? "").slice(0, MAX_REASON_LENGTH) || "cancelled";
  return appendAtTail(store, runId, "workflow_cancelled", { reason: text }, now, "cancel");
}

function appendAtTail<T extends "event_received" | "workflow_cancelled">(
  store: WorkflowEventStore,
  runId: string,
  type: T & WorkflowEventType,
  payload: StoredEventOf<T>["payload"],
  now: number,
  doing: string,
): StoredEventOf<T> {
  for (let tries = 1; ; tries++) {
    const last = store.lastEvent(runId);
    if (last === null) throw new PlatformError("not_found", `Workflow run "${runId}" does not exist`);
    if (isTerminalEvent(last))
      throw new PlatformError(
        "conflict",
        `Workflow run "${runId}" is already ${last.type.replace("workflow_", "")}; there is nothing to ${doing}`,
        { runId, status: last.type.replace("workflow_", "") },
      );
    const event = nextEvent(last, type, payload as never, now) as StoredEvent as StoredEventOf<T>;
    // An executor appended first (spec rule 3): read the new tail (it may be terminal now) and try again.
    if (store.append([event]).appended) return event;
    if (tries >= MAX_APPEND_TRIES)
      throw new PlatformError(
        "conflict",
        `Could not ${doing} workflow run "${runId}": its log kept moving for ${MAX_APPEND_TRIES} tries; try again`,
        { runId },
      );
  }
}
