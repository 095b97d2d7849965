import { isControlEvent, type StoredEvent } from "../execution/events.ts";
import { freezeJson, type JsonValue } from "../api/json.ts";

/** An event_received not yet delivered to a step, as the resolver sees it. */
export interface QueuedEvent {
  seq: number;
  name: string;
  payload: JsonValue;
  /** Epoch ms it arrived: an event that arrived after a wait's `timeout_at` does not end that wait. */
  at: number;
}

/** What a step receives as `ctx.event`. */
export interface DeliveredEvent {
  name: string;
  payload: JsonValue;
}

/**
 * The events sent to one run (`event_received`), folded from
 * its log like the scratchpad, so an execution reads the log once and keeps
 * this in memory. An event is queued when it arrives and leaves the queue when
 * a step_started names it (`event_seq`): from then on every attempt of that
 * step gets it as `ctx.event`.
 */
export interface Inbox {
  /** Undelivered events in arrival (seq) order. */
  readonly queued: readonly QueuedEvent[];
  /** What the current step's attempts receive (null: the step follows no wait, or its wait timed out). */
  readonly delivered: DeliveredEvent | null;
  /** The seq of `delivered`, repeated on the step_started of every retry. */
  readonly deliveredSeq: number | undefined;
  apply(event: StoredEvent): void;
}

/** An {@link Inbox}; its fields are written only by `apply` (callers see them read-only). */
class EventInbox implements Inbox {
  readonly queued: QueuedEvent[] = [];
  delivered: DeliveredEvent | null = null;
  deliveredSeq: number | undefined;

  apply(event: StoredEvent): void {
    const { queued } = this;
    if (event.type === "event_received") {
      queued.push({
        seq: event.seq,
        name: event.payload.name,
        payload: freezeJson(event.payload.payload),
        at: event.at,
      });
      return;
    }
    // A retry keeps what attempt 1 received.
    if (event.type !== "step_started" || event.payload.attempt > 1) return;
    const seq = event.payload.event_seq;
    const index = seq === undefined ? -1 : queued.findIndex((queuedEvent) => queuedEvent.seq === seq);
    const taken = index >= 0 ? queued.splice(index, 1)[0] : undefined;
    this.delivered = taken ? { name: taken.name, payload: taken.payload } : null;
    this.deliveredSeq = taken?.seq;
  }
}

export function createInbox(events: Iterable<StoredEvent> = []): Inbox {
  const inbox = new EventInbox();
  for (const event of events) inbox.apply(event);
  return inbox;
}

/** The event a run's state is decided from: the last one other than a control event (see isControlEvent). */
export function lastStateEvent(events: readonly StoredEvent[]): StoredEvent | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i] as StoredEvent;
    if (!isControlEvent(event)) return event;
  }
  return null;
}

/** Whether the run is paused after `events` (its last pause or resume mark is a pause). */
export function isPausedAfter(events: readonly StoredEvent[]): boolean {
  for (let i = events.length - 1; i >= 0; i--) {
    const type = (events[i] as StoredEvent).type;
    if (type === "workflow_paused") return true;
    if (type === "workflow_resumed") return false;
  }
  return false;
}
