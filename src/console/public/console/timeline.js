// @ts-check
// The pure part of the console's run view: a run's events (as
// `GET /projects/:slug/workflows/:runId` returns them) folded into rows to
// draw, one per step attempt. No DOM here, so Node tests import it as is.

/**
 * A step_completed's `continuation` is the engine's decoding of its payload (what
 * comes next: `done`, `next_step`, `sleep`, `wait_for_event`, …); every kind but
 * `done` names the next `step`, and every kind but `done` and `next_step` is a
 * pause before it that ends on its own at `until` when it has one.
 * @typedef {{ kind: string, step?: string, until?: number, event?: string }} Continuation
 * @typedef {{ seq: number, type: string, at: number, payload: Record<string, any>, continuation?: Continuation }} RunEvent
 * @typedef {{ id: string, name: string, status: string, result?: unknown, error?: string, createdAt: number, updatedAt: number, events: RunEvent[] }} RunView
 * @typedef {"completed" | "failed" | "running"} AttemptOutcome
 * @typedef {{
 *   step: string, attempt: number, start: number, end: number, outcome: AttemptOutcome,
 *   reason?: string, retryable?: boolean, nextStep?: string,
 *   retryWait?: { start: number, end: number, pending: boolean },
 *   rollback?: true
 * }} AttemptRow  one attempt of a step, or (`rollback`) of the rollback handler undoing that step
 * @typedef {{
 *   pause: string, start: number, end: number, pending: boolean,
 *   until?: number, event?: string, outcome?: "woke" | "received" | "timed_out" | "ended"
 * }} PauseRow  a pause between two steps: "sleep" (until the wake time), "wait" (for an event, until its
 *   timeout if any), or another continuation kind's name (until its `until`, if any)
 * @typedef {{ mark: "event", at: number, name: string, payload: unknown } | { mark: "cancel", at: number, reason: string }} Mark
 * @typedef {{
 *   start: number, end: number, rows: (AttemptRow | PauseRow)[], marks: Mark[],
 *   outcome: { status: string, at: number | null, result?: unknown, error?: string, cause?: string, reason?: string }
 * }} Timeline
 */

/**
 * Each pause kind the engine makes, with its row label and legend text; each has its own bar
 * (`.bar.pause-<kind>` in console.css). A kind not listed is still drawn, by its name.
 */
export const PAUSE_KINDS = [
  { pause: "sleep", label: "sleep", legend: "sleeping" },
  { pause: "wait", label: "wait for an event", legend: "waiting for an event" },
  { pause: "children", label: "children", legend: "waiting for child runs" },
];

/**
 * @param {RunView} view
 * @param {number} now  the time a running run is drawn up to
 * @returns {Timeline}
 */
export function buildTimeline(view, now) {
  /** @type {(AttemptRow | PauseRow)[]} */
  const rows = [];
  /** @type {Mark[]} */
  const marks = [];
  /** @type {AttemptRow | undefined} */
  let open;
  /** The sleep or wait the next step's start ends. @type {PauseRow | undefined} */
  let pause;
  /** @type {Timeline["outcome"]} */
  let outcome = { status: view.status, at: null };
  for (const event of view.events) {
    const p = event.payload;
    switch (event.type) {
      case "step_started": {
        const previous = rows[rows.length - 1];
        // The gap between a retryable failure and the next attempt of that step is its backoff.
        if (previous && !("pause" in previous) && previous.retryWait && previous.step === p.step)
          previous.retryWait = { start: previous.end, end: event.at, pending: false };
        if (pause) {
          const taken = view.events.find((e) => e.seq === p.event_seq && e.type === "event_received");
          const outcome = taken ? "received" : pause.pause === "wait" ? "timed_out" : "woke";
          Object.assign(pause, { end: event.at, pending: false, outcome });
          pause = undefined;
        }
        open = { step: p.step, attempt: p.attempt, start: event.at, end: event.at, outcome: "running" };
        rows.push(open);
        break;
      }
      case "step_completed": {
        const next = event.continuation ?? { kind: "done" };
        if (open && open.step === p.step)
          Object.assign(open, { end: event.at, outcome: "completed", nextStep: next.step });
        open = undefined;
        pause = pauseBefore(next, event.at);
        if (pause) rows.push(pause);
        break;
      }
      case "step_failed": {
        const row = open && open.step === p.step && open.attempt === p.attempt ? open : undefined;
        if (row) {
          Object.assign(row, { end: event.at, outcome: "failed", reason: p.reason, retryable: p.retryable });
          if (p.retryable) row.retryWait = { start: event.at, end: now, pending: true };
        }
        open = undefined;
        break;
      }
      case "rollback_started": {
        const previous = rows[rows.length - 1];
        if (previous && !("pause" in previous) && previous.rollback && previous.retryWait && previous.step === p.step)
          previous.retryWait = { start: previous.end, end: event.at, pending: false };
        open = { step: p.step, attempt: p.attempt, start: event.at, end: event.at, outcome: "running", rollback: true };
        rows.push(open);
        break;
      }
      case "rollback_completed":
        if (open?.rollback && open.step === p.step) Object.assign(open, { end: event.at, outcome: "completed" });
        open = undefined;
        break;
      case "rollback_failed": {
        const row = open?.rollback && open.step === p.step && open.attempt === p.attempt ? open : undefined;
        if (row) {
          Object.assign(row, { end: event.at, outcome: "failed", reason: p.reason, retryable: p.retryable });
          if (p.retryable) row.retryWait = { start: event.at, end: now, pending: true };
        }
        open = undefined;
        break;
      }
      case "workflow_completed":
        outcome = { status: "completed", at: event.at, result: p.result };
        break;
      case "workflow_failed":
        outcome = { status: "failed", at: event.at, error: p.reason, cause: p.cause };
        break;
      case "event_received":
        marks.push({ mark: "event", at: event.at, name: p.name, payload: p.payload });
        break;
      // A cancel that rolls back first: marked when asked for; the run ends with workflow_cancelled.
      case "cancel_requested":
        marks.push({ mark: "cancel", at: event.at, reason: p.reason });
        break;
      case "workflow_cancelled":
        if (!marks.some((mark) => mark.mark === "cancel"))
          marks.push({ mark: "cancel", at: event.at, reason: p.reason });
        outcome = { status: "cancelled", at: event.at, reason: p.reason };
        break;
    }
  }
  // A paused, queued or waiting run has not finished: its pauses and waits still grow.
  const finished = !["running", "waiting", "paused", "queued"].includes(view.status);
  for (const row of rows) {
    if ("pause" in row) {
      // A pause the run ended in (cancelled while asleep) ends with the run; one still on grows to now.
      if (row.pending && finished) Object.assign(row, { end: view.updatedAt, pending: false, outcome: "ended" });
      else if (row.pending) row.end = Math.max(row.start, now);
      continue;
    }
    if (row.outcome === "running") row.end = finished ? row.start : Math.max(row.start, now);
    // A retry wait is only pending while the run is still running.
    if (row.retryWait?.pending && finished) delete row.retryWait;
  }
  const start = view.createdAt;
  const end = finished ? view.updatedAt : Math.max(view.updatedAt, now);
  return { start, end, rows, marks, outcome };
}

/**
 * The pause a continuation makes before its next step; none for `done` and `next_step`.
 * @param {Continuation} next
 * @param {number} at  when the step completed
 * @returns {PauseRow | undefined}
 */
function pauseBefore(next, at) {
  if (next.kind === "done" || next.kind === "next_step") return undefined;
  /** @type {PauseRow} */
  const pause = { pause: next.kind === "wait_for_event" ? "wait" : next.kind, start: at, end: at, pending: true };
  if (next.event !== undefined) pause.event = next.event;
  if (next.until !== undefined) pause.until = next.until;
  return pause;
}

/**
 * Where a span sits on the run's time axis, in percent of its width. A span
 * too short to see still gets a sliver, so every attempt shows a bar.
 * @param {{ start: number, end: number }} span
 * @param {{ start: number, end: number }} axis
 */
export function placeOnAxis(span, axis) {
  const total = Math.max(1, axis.end - axis.start);
  const left = ((span.start - axis.start) / total) * 100;
  const width = Math.max(0.5, ((span.end - span.start) / total) * 100);
  return { left: clamp(left, 0, 99.5), width: clamp(width, 0.5, 100 - clamp(left, 0, 99.5)) };
}

/** @param {number} value @param {number} min @param {number} max */
function clamp(value, min, max) {
  return Math.min(max, Math.max(min, value));
}

/** "850 ms", "1.2 s", "3 min 5 s". @param {number} ms */
export function formatDuration(ms) {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return seconds ? `${minutes} min ${seconds} s` : `${minutes} min`;
}
