import { isPlatformError, PlatformError } from "../../core/errors.ts";
import { awaitedEventName, checkEventName } from "../execution/continuation.ts";
import type { AwaitedRun } from "../execution/continuation.ts";
import {
  isTerminalEvent,
  nextEvent,
  type StoredEvent,
  type StoredEventOf,
  type WorkflowEventType,
} from "../execution/events.ts";
import { encodePayload, type JsonValue, toJsonValue } from "../api/json.ts";
import { summaryOf } from "../execution/appendRules.ts";
import { MAX_REASON_LENGTH } from "../execution/stepFailure.ts";
import type { WorkflowDefinition } from "../api/definition.ts";
import { createRollbackFold } from "../execution/rollback.ts";
import { awaitedRunOf, describeRun } from "../execution/describeRun.ts";
import { isLiveStatus, type RunStatus, type WorkflowEventStore } from "../storage/store.ts";

/** How often a send or cancel re-reads the tail after losing its seq to an executor before giving up. */
const MAX_APPEND_TRIES = 20;

/** An event sent to a run: its name and payload, as the caller gave them (checked here). */
export interface SentEvent {
  name: unknown;
  payload: unknown;
}

/**
 * `workflow.send(runId, name, payload)`. Appends
 * event_received at the end of the run's log, whatever the run is doing (a
 * step in flight appends its outcome after it); the event waits there until a
 * step's `waitFor` takes it. The payload follows the JSON rule and size limit
 * of step writes. Throws `invalid_input`/`payload_too_large` for a bad event,
 * `not_found` for an unknown run and `conflict` for a finished one.
 */
export function appendReceivedEvent(
  store: WorkflowEventStore,
  runId: string,
  { name, payload }: SentEvent,
  now: number,
): StoredEventOf<"event_received"> {
  return appendAtTail(store, runId, "event_received", receivedEventPayload(name, payload), now, "send an event to");
}

/**
 * A POST to a run's callback URL (`ctx.callbackURL`): appends event_received
 * `{ name, payload, via: "callback", callback: callbackId }`, as a send does.
 * The event itself spends the URL, in the run's own log and in the same
 * append: a second delivery of `callbackId` (a replay, after a restart too)
 * is `conflict`, as is one to a finished run.
 */
export function appendCallbackEvent(
  store: WorkflowEventStore,
  runId: string,
  delivery: SentEvent & { callbackId: string },
  now: number,
): StoredEventOf<"event_received"> {
  const { name, payload, callbackId } = delivery;
  const received = { ...receivedEventPayload(name, payload), via: "callback" as const, callback: callbackId };
  const spent = () =>
    store.events(runId).some((event) => event.type === "event_received" && event.payload.callback === callbackId)
      ? `This callback URL of workflow run "${runId}" was already used; it delivers its event once`
      : null;
  // Said first: the run its event ended is finished too, and "already used" is the truer answer.
  const used = store.lastEvent(runId) === null ? null : spent();
  if (used) throw new PlatformError("conflict", used, { runId });
  return appendAtTail(store, runId, "event_received", received, now, "send an event to", spent);
}

/**
 * `waitForRun`, where `runId` is held: how it ended, if it has; else `waiterRunId` is recorded with it,
 * for its end to tell ({@link deliverRunEnded}). `not_found` for a run the store does not hold.
 */
export function watchRunEnd(store: WorkflowEventStore, runId: string, waiterRunId: string): AwaitedRun | null {
  const view = describeRun(store.events(runId));
  if (!view) throw new PlatformError("not_found", `Workflow run "${runId}" does not exist`);
  if (!isLiveStatus(view.status)) return awaitedRunOf(view);
  store.watchRun(runId, waiterRunId);
  return null;
}

/**
 * Tells a run that waits with `waitForRun` that `ended.runId` has ended: appends the event named
 * `awaitedEventName(ended.runId)` to its log, once (a run's end may be told again after a crash), and not
 * to a run that has ended meanwhile. Answers whether it appended (the host then drives the waiter).
 */
export function deliverRunEnded(
  store: WorkflowEventStore,
  waiterRunId: string,
  ended: AwaitedRun,
  now: number,
): boolean {
  const name = awaitedEventName(ended.runId);
  const events = store.events(waiterRunId);
  const last = events[events.length - 1];
  if (!last || isTerminalEvent(last)) return false;
  if (events.some((event) => event.type === "event_received" && event.payload.name === name)) return false;
  try {
    appendAtTail(store, waiterRunId, "event_received", runEndedPayload(ended), now, "tell a run's end to");
  } catch (error) {
    // It ended between the read and the append: nobody is left to tell.
    if (isPlatformError(error) && error.code === "conflict") return false;
    throw error;
  }
  return true;
}

/** The event_received that tells a waiter how `ended` ended; a result too large to pass on is replaced by where to read it. */
export function runEndedPayload(ended: AwaitedRun): StoredEventOf<"event_received">["payload"] {
  const payload = { name: awaitedEventName(ended.runId), payload: ended as unknown as JsonValue };
  try {
    encodePayload(payload, "The end of an awaited run");
    return payload;
  } catch {
    const { result: _, ...rest } = ended;
    return {
      name: payload.name,
      payload: { ...rest, error: `Its result is too large to pass on; read it with workflow.get("${ended.runId}")` },
    };
  }
}

/** An event_received's payload, checked: a valid name, a JSON payload within the size limit of step writes. */
export function receivedEventPayload(name: unknown, payload: unknown): StoredEventOf<"event_received">["payload"] {
  const eventName = checkEventName(name, "workflow.send: the event name");
  const body = {
    name: eventName,
    payload: toJsonValue(payload === undefined ? null : payload, `payload of event "${eventName}"`),
  };
  encodePayload(body, `The payload of event "${eventName}"`);
  return body;
}

/** A cancel asked for: the run, the caller's reason (checked here), when, and the run's definition if known. */
export interface CancelRequest {
  runId: string;
  reason: unknown;
  now: number;
  /** Needed to roll back on cancel (`rollbackOnCancel`); without it the run ends at once. */
  definition?: WorkflowDefinition;
}

/**
 * `workflow.cancel(runId, reason)`. Appends the terminal
 * workflow_cancelled in one append: a step in flight may still finish, but
 * its outcome finds the seq taken by a terminal event and is dropped. Throws
 * `not_found` for an unknown run and `conflict` for a finished one.
 *
 * For a run of `definition` with `rollbackOnCancel` and completed steps to
 * roll back, it appends cancel_requested instead (not terminal; a step in
 * flight loses its commit to it all the same): the host then drives the run,
 * whose rollbacks run before workflow_cancelled ends it (rollback.ts). A
 * second cancel meanwhile is `conflict`.
 */
export function cancelRun(
  store: WorkflowEventStore,
  { runId, reason, now, definition }: CancelRequest,
): StoredEventOf<"workflow_cancelled" | "cancel_requested"> {
  const recorded = { reason: recordedReason(reason, "cancel") };
  if (definition?.rollbackOnCancel && store.lastEvent(runId) !== null) {
    const events = store.events(runId);
    if (events.some((event) => event.type === "cancel_requested"))
      throw new PlatformError("conflict", `Workflow run "${runId}" is already being cancelled (it rolls back first)`, {
        runId,
      });
    if (createRollbackFold(events, definition).next !== null)
      return appendAtTail(store, runId, "cancel_requested", recorded, now, "cancel");
  }
  return appendAtTail(store, runId, "workflow_cancelled", recorded, now, "cancel");
}

/**
 * `workflow.pause(runId, reason)`. Appends workflow_paused:
 * from then on the run claims no new step (a step in flight finishes and is
 * committed); sleeps, waits and retries that fall due meanwhile take effect
 * on resume. Throws `not_found`, and `conflict` for a finished or paused run
 * and for a queued one (flow control: it has not started; cancel it instead).
 */
export function pauseRun(
  store: WorkflowEventStore,
  runId: string,
  reason: unknown,
  now: number,
): StoredEventOf<"workflow_paused"> {
  const text = recordedReason(reason, "pause");
  return appendAtTail(store, runId, "workflow_paused", { reason: text }, now, "pause", (status) => {
    if (status === "paused") return `Workflow run "${runId}" is already paused`;
    if (status === "queued")
      return `Workflow run "${runId}" is queued and has not started; only a started run can be paused (cancel it instead)`;
    return null;
  });
}

/** `workflow.resume(runId)`. Appends workflow_resumed; `not_found`, `conflict` unless paused. */
export function resumeRun(store: WorkflowEventStore, runId: string, now: number): StoredEventOf<"workflow_resumed"> {
  return appendAtTail(store, runId, "workflow_resumed", {}, now, "resume", (status) =>
    status === "paused" ? null : `Workflow run "${runId}" is not paused; there is nothing to resume`,
  );
}

/** Refuses a cancel's or pause's reason that is not a string (`workflow.cancel`, `workflow.pause`). */
export function checkReason(reason: unknown, control: "cancel" | "pause"): asserts reason is string | undefined {
  if (reason !== undefined && typeof reason !== "string")
    throw new PlatformError("invalid_input", `workflow.${control}: the reason must be a string`);
}

/** The reason a cancel or pause records: the one given, cut to {@link MAX_REASON_LENGTH}; none: "cancelled", "paused". */
function recordedReason(reason: unknown, control: "cancel" | "pause"): string {
  checkReason(reason, control);
  return (reason ?? "").slice(0, MAX_REASON_LENGTH) || (control === "cancel" ? "cancelled" : "paused");
}

function appendAtTail<
  T extends "event_received" | "workflow_cancelled" | "cancel_requested" | "workflow_paused" | "workflow_resumed",
>(
  store: WorkflowEventStore,
  runId: string,
  type: T & WorkflowEventType,
  payload: StoredEventOf<T>["payload"],
  now: number,
  doing: string,
  /** For pause and resume: the conflict, if any, given the run's status now. */
  refusal?: (status: RunStatus) => string | null,
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
    const refused = refusal?.(summaryOf(store.events(runId)).status);
    if (refused) throw new PlatformError("conflict", refused, { runId });
    const event = nextEvent(last, { type, payload: payload as never, at: now }) as StoredEvent as StoredEventOf<T>;
    // An executor appended first (a race, not an error): read the new tail (it may be terminal now) and try again.
    if (store.append([event]).appended) return event;
    if (tries >= MAX_APPEND_TRIES)
      throw new PlatformError(
        "conflict",
        `Could not ${doing} workflow run "${runId}": its log kept moving for ${MAX_APPEND_TRIES} tries; try again`,
        { runId },
      );
  }
}
