import type { RunEventView } from "../../../engine/describeRun.ts";

/** The terminal lines of `platform dev` for requests and workflow steps (`--quiet` silences both). */

export interface RequestRecord {
  method: string;
  path: string;
  status: number;
  ms: number;
}

/** `GET /api/hello/Ada → 200 in 3 ms` */
export function formatRequestLine(r: RequestRecord): string {
  return `${r.method} ${r.path} → ${r.status} in ${r.ms} ms`;
}

/** Miniflare's own request line (`GET /path 200 OK (3ms)`, colours stripped), or null for any other message. */
export function parseMiniflareRequestLine(message: string): RequestRecord | null {
  const match = /^([A-Z]+) (\S*) (\d{3})\b.*?\((\d+)ms\)/.exec(message);
  if (!match) return null;
  return { method: match[1]!, path: match[2]!, status: Number(match[3]), ms: Number(match[4]) };
}

/**
 * The recovery cron's every-minute lines when it found nothing to repair: the
 * project's `Re-enqueued 0 workflow(s)` and the API worker's
 * `cron <slug>/__workflow-recovery: 200 Re-enqueued 0 workflow(s)`.
 */
export function isIdleRecoveryLine(message: string): boolean {
  return /(^|: 200 )Re-enqueued 0 workflow\(s\)$/.test(message.trim());
}

/** The first 8 characters of a run id: enough to tell runs apart in a terminal, and a prefix to search for. */
export function shortRunId(runId: string): string {
  return runId.slice(0, 8);
}

/** A pause as a person says it: `250 ms`, `5 s`, `1.5 min`, `2 h`, `3 d`. */
export function spokenDuration(ms: number): string {
  const units: [number, string][] = [
    [86_400_000, "d"],
    [3_600_000, "h"],
    [60_000, "min"],
    [1000, "s"],
  ];
  for (const [size, unit] of units) {
    if (ms >= size) return `${Number((ms / size).toFixed(1))} ${unit}`;
  }
  return `${Math.max(0, Math.round(ms))} ms`;
}

/** What follows a completed step: the next step, and whether the run sleeps or waits for an event first. */
function nextPart(event: Extract<RunEventView, { type: "step_completed" }>): string {
  const { next_step: next, wake_at: wakeAt, waiting_for: waitingFor, timeout_at: timeoutAt } = event.payload;
  if (next === undefined) return "done";
  if (waitingFor !== undefined)
    return `${next}, waits for "${waitingFor}"${timeoutAt === undefined ? "" : ` (at most ${spokenDuration(timeoutAt - event.at)})`}`;
  if (wakeAt !== undefined) return `${next}, sleeps ${spokenDuration(wakeAt - event.at)}`;
  return next;
}

/**
 * One line per transition of a run, from its events in seq order:
 * `run 3f2a9c1d: charge#2 completed in 3 ms → pack`, and (beyond the spec's
 * events) when the run sleeps or waits for an event, receives one or is
 * cancelled. `step_started` prints nothing itself (the line that ends the
 * attempt says how long it ran); `before` are the run's earlier events, for
 * those attempt numbers and times.
 */
export function formatStepLines(
  runId: string,
  workflowName: string,
  events: readonly RunEventView[],
  before: readonly RunEventView[] = [],
): string[] {
  const run = `run ${shortRunId(runId)}`;
  const lines: string[] = [];
  let started = [...before].reverse().find((e) => e.type === "step_started");
  for (const event of events) {
    const attempt = started?.type === "step_started" ? started.payload.attempt : 1;
    const took = started ? ` in ${Math.max(0, event.at - started.at)} ms` : "";
    switch (event.type) {
      case "workflow_created":
        lines.push(`${run}: ${workflowName} started`);
        break;
      case "step_started":
        started = event;
        break;
      case "step_completed":
        lines.push(`${run}: ${event.payload.step}#${attempt} completed${took} → ${nextPart(event)}`);
        break;
      case "step_failed":
        lines.push(
          `${run}: ${event.payload.step}#${event.payload.attempt} failed${took}: ${event.payload.reason}${event.payload.retryable ? " (will retry)" : ""}`,
        );
        break;
      case "event_received":
        lines.push(`${run}: received "${event.payload.name}"`);
        break;
      case "workflow_completed":
        lines.push(`${run}: ${workflowName} completed`);
        break;
      case "workflow_failed":
        lines.push(`${run}: ${workflowName} failed: ${event.payload.reason}`);
        break;
      case "workflow_cancelled":
        lines.push(`${run}: ${workflowName} cancelled${event.payload.reason ? `: ${event.payload.reason}` : ""}`);
        break;
    }
  }
  return lines;
}
