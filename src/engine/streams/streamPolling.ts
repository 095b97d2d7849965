import type { StoredEvent } from "../execution/events.ts";
import type { RunStatus } from "../execution/runSummary.ts";

/** How soon a reader of a run with no execution under way asks again, at least and at most. */
export const STREAM_POLL_MS = { min: 1000, max: 30_000 } as const;

/**
 * How long a reader of a run that no execution is driving right now waits
 * before asking the run's actor again, from the run's status and the last
 * event of its log. A run that sleeps or retries later is asked again when it
 * is due (at most 30 s on); one that waits for an event or a run, or is paused
 * or queued, every 30 s; one about to go on (its next step claimed soon), in
 * 1 s. Between asks the actor has no request open, so it can hibernate.
 */
export function streamPollDelayMS(status: RunStatus, last: StoredEvent | null, now: number): number {
  const until = (at: number) => Math.min(STREAM_POLL_MS.max, Math.max(STREAM_POLL_MS.min, at - now));
  if (status !== "running" || !last) return STREAM_POLL_MS.max;
  if (last.type === "step_completed") {
    const { wake_at, waiting_for, waiting_for_run, timeout_at } = last.payload;
    if (wake_at !== undefined) return until(wake_at);
    if (waiting_for !== undefined || waiting_for_run !== undefined)
      return timeout_at === undefined ? STREAM_POLL_MS.max : until(timeout_at);
  }
  if (last.type === "step_failed" && last.payload.retry_at !== undefined) return until(last.payload.retry_at);
  return STREAM_POLL_MS.min;
}
