import type { StoredEvent, WorkflowEventPayloads, WorkflowEventType } from "#src/engine/execution/events.ts";
import type { WorkflowEventStore } from "#src/engine/storage/store.ts";

/** A clock tests move by hand. */
export function manualClock(start = 1_700_000_000_000) {
  let time = start;
  return {
    now: () => time,
    advance(ms: number) {
      time += ms;
    },
    set(at: number) {
      time = at;
    },
  };
}

export interface LogBuilder {
  events: StoredEvent[];
  add<T extends WorkflowEventType>(type: T, payload: WorkflowEventPayloads[T], eventAt?: number): LogBuilder;
  created(
    workflowName: string,
    data?: WorkflowEventPayloads["workflow_created"]["writes"][string],
    eventAt?: number,
  ): LogBuilder;
  writeTo(store: WorkflowEventStore): LogBuilder;
}

/** Builds a run's log event by event, for manufacturing any state directly in a store. */
export function logBuilder(runId = "run-1", workflowId = runId, at = 1_700_000_000_000): LogBuilder {
  const events: StoredEvent[] = [];
  const builder: LogBuilder = {
    events,
    add(type, payload, eventAt = at) {
      events.push({ runId, workflowId, seq: events.length + 1, type, payload, at: eventAt } as StoredEvent);
      return builder;
    },
    created(workflowName, data = null, eventAt = at) {
      return builder.add("workflow_created", { workflowName, writes: { data } }, eventAt);
    },
    /** Writes the log into a store the way the engine would: create, then append the rest. */
    writeTo(store) {
      const [first, ...rest] = events;
      if (!first) throw new Error("empty log");
      store.createRunIfNoActive(first);
      if (rest.length) store.append(rest);
      return builder;
    },
  };
  return builder;
}

/**
 * `type(step,attempt[,reason],retryable|final)` per event, like the spec's event sequences, for
 * compact assertions; `reasons` adds each step_failed's reason (where the reason is the point).
 */
export function shape(
  events: readonly { type: string; payload: object }[],
  { reasons = false }: { reasons?: boolean } = {},
): string[] {
  return events.map((event) => {
    const p = event.payload as Record<string, unknown>;
    switch (event.type) {
      case "step_started":
        return `step_started(${p.step},${p.attempt})`;
      case "step_failed":
        return `step_failed(${p.step},${p.attempt},${reasons ? `${p.reason},` : ""}${p.retryable ? "retryable" : "final"})`;
      case "step_completed":
        return p.next_step === undefined ? `step_completed(${p.step})` : `step_completed(${p.step}->${p.next_step})`;
      case "event_received":
        return `event_received(${p.name})`;
      case "rollback_started":
        return `rollback_started(${p.step},${p.attempt})`;
      case "rollback_completed":
        return `rollback_completed(${p.step})`;
      case "rollback_failed":
        return `rollback_failed(${p.step},${p.attempt},${reasons ? `${p.reason},` : ""}${p.retryable ? "retryable" : "final"})`;
      default:
        return event.type;
    }
  });
}

// The spec's event sequences the tests meet most, as `shape` writes them.

/** A one-step run that completed at its first attempt. */
export const ONE_STEP_LOG = [
  "workflow_created",
  "step_started(start,1)",
  "step_completed(start)",
  "workflow_completed",
];

/** A run that went start → finish without a failure. */
export const START_FINISH_LOG = [
  "workflow_created",
  "step_started(start,1)",
  "step_completed(start->finish)",
  "step_started(finish,1)",
  "step_completed(finish)",
  "workflow_completed",
];

/** A one-step run whose first attempt failed (retryable) and whose second completed it. */
export const RETRIED_ONCE_LOG = [
  "workflow_created",
  "step_started(start,1)",
  "step_failed(start,1,retryable)",
  "step_started(start,2)",
  "step_completed(start)",
  "workflow_completed",
];

/** A one-step run that failed both of its two attempts: attempts_exhausted. */
export const EXHAUSTED_AFTER_TWO_LOG = [
  "workflow_created",
  "step_started(start,1)",
  "step_failed(start,1,retryable)",
  "step_started(start,2)",
  "step_failed(start,2,final)",
  "workflow_failed",
];

/** A run whose first step failed for good on its first attempt. */
export const FAILED_AT_ONCE_LOG = [
  "workflow_created",
  "step_started(start,1)",
  "step_failed(start,1,final)",
  "workflow_failed",
];

/** A promise with its resolver outside, to hold a step open. */
export function gate<T = void>() {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}
