import { isTerminalEvent, type StoredEvent } from "../execution/events.ts";
import type { JsonValue } from "../api/json.ts";
import { LIFECYCLE_TOPIC, type StreamMessageInput } from "./runStream.ts";

/**
 * The messages the platform publishes on topic `run` for an event of the
 * run's log, so a page can show a run's progress with no code of its own:
 * `step_started`, `step_completed`, `step_failed`, then `sleeping` or
 * `waiting` when the next step is delayed, and `ended` with the run's status.
 * Other events (sent events, pauses, rollbacks) publish nothing.
 */
export function lifecycleMessagesOf(event: StoredEvent): StreamMessageInput[] {
  const message = (data: JsonValue, step = "", attempt = 0): StreamMessageInput => ({
    topic: LIFECYCLE_TOPIC,
    json: JSON.stringify(data),
    at: event.at,
    step,
    attempt,
  });
  if (isTerminalEvent(event)) {
    const status =
      event.type === "workflow_completed" ? "completed" : event.type === "workflow_failed" ? "failed" : "cancelled";
    return [message({ type: "ended", status })];
  }
  switch (event.type) {
    case "step_started":
      return [message({ type: "step_started", step: event.payload.step }, event.payload.step, event.payload.attempt)];
    case "step_failed":
      return [
        message(
          {
            type: "step_failed",
            step: event.payload.step,
            reason: event.payload.reason,
            retryable: event.payload.retryable,
          },
          event.payload.step,
          event.payload.attempt,
        ),
      ];
    case "step_completed": {
      const { step, next_step, wake_at, waiting_for, waiting_for_run, timeout_at } = event.payload;
      const completed = message({ type: "step_completed", step, ...(next_step ? { next: next_step } : {}) }, step);
      if (wake_at !== undefined) return [completed, message({ type: "sleeping", until: wake_at }, step)];
      const waitingFor = waiting_for ?? waiting_for_run;
      if (waitingFor === undefined) return [completed];
      const waiting = {
        type: "waiting",
        ...(waiting_for === undefined ? { run: waitingFor } : { event: waitingFor }),
        ...(timeout_at === undefined ? {} : { timeoutAt: timeout_at }),
      };
      return [completed, message(waiting, step)];
    }
    default:
      return [];
  }
}
