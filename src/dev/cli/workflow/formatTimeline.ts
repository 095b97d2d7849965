import type { RunEventView, WorkflowRunView } from "../../../engine/execution/describeRun.ts";
import type { RunSummary } from "../../../engine/storage/store.ts";

/**
 * A list row, with what a `running` run is waiting on when the engine says so:
 * asleep until `wakeAt`, waiting for an event, for its children, or (queued) for its turn.
 */
export type RunSummaryWithPause = RunSummary &
  Pick<WorkflowRunView, "wakeAt" | "waitingFor" | "waitingForRun" | "queued" | "waitingForChildren">;

/** The widest a `workflow list` line may be without --full (a terminal of 100 columns). */
export const LIST_WIDTH = 100;

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

function ms(value: number): string {
  return value >= 10_000 ? `${(value / 1000).toFixed(1)} s` : `${Math.round(value)} ms`;
}

/** Epoch ms as `2026-11-22T10:00:00Z` (UTC, to the second). */
export function utc(at: number): string {
  return new Date(at).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** `value` cut to `max` characters, the last one an ellipsis when cut. */
export function truncate(value: string, max: number): string {
  return value.length <= max ? value : `${value.slice(0, max - 1)}…`;
}

/** Rows of cells as aligned columns; the first row is the header. */
export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

export const TIMELINE_HEADER = ["seq", "at", "event", "step", "attempt", "duration", "detail"];

/** How a step's completion says what comes next: the next step, and whether it sleeps, waits or pauses otherwise first. */
function nextDetail(run: WorkflowRunView, event: Extract<RunEventView, { type: "step_completed" }>): string {
  const next = event.continuation;
  switch (next.kind) {
    case "done":
      return "done";
    case "next_step":
      return `next: ${next.step}`;
    case "sleep":
      return `next: ${next.step}, sleeps ${ms(next.until - event.at)} (until +${ms(next.until - run.createdAt)})`;
    case "wait_for_event":
      return `next: ${next.step}, waits for "${next.event}"${next.until === undefined ? "" : ` (timeout at +${ms(next.until - run.createdAt)})`}`;
    case "children":
      return `next: ${next.step}, waits for ${count(next.children.length, "child", "children")}`;
    default: {
      // A kind this table has no words for yet: what every pause has.
      const pause: { kind: string; step: string; until?: number } = next;
      return `next: ${pause.step}, ${pause.kind}${pause.until === undefined ? "" : ` (until +${ms(pause.until - run.createdAt)})`}`;
    }
  }
}

/**
 * A run's events as timeline cells, one row per event: the step, the
 * attempt, how long the attempt ran (on its completion or failure), how long
 * a retry, sleep or wait lasted (on the next start), and the failure reason.
 * Row i is event i, so a follower can print only the rows it has not printed.
 */
export function timelineRows(run: WorkflowRunView): string[][] {
  const rows: string[][] = [];
  let startedAt: number | undefined;
  /** Set after a retryable failure or a pause before the next step: the next start says how long it was. */
  let pause: { at: number; kind: string } | undefined;
  for (const event of run.events) {
    const offset = `+${ms(event.at - run.createdAt)}`;
    let step = "";
    let attempt = "";
    let duration = "";
    let detail = "";
    switch (event.type) {
      case "workflow_created":
        detail = `data ${JSON.stringify(event.payload.writes.data ?? null)}`;
        if (event.payload.queued) detail += `, queued under key ${JSON.stringify(event.payload.flow_key ?? "")}`;
        if (event.payload.idempotency_key !== undefined)
          detail += `, idempotency key ${JSON.stringify(event.payload.idempotency_key)}`;
        break;
      case "step_started": {
        step = event.payload.step;
        attempt = String(event.payload.attempt);
        const waited = pause ? ms(event.at - pause.at) : "";
        const delivered =
          event.payload.event_seq === undefined
            ? undefined
            : run.events.find((e) => e.seq === event.payload.event_seq && e.type === "event_received");
        if (pause?.kind === "retry") detail = `retry after waiting ${waited}`;
        else if (pause?.kind === "sleep") detail = `woke after ${waited}`;
        else if (pause?.kind === "wait_for_event")
          detail =
            delivered?.type === "event_received"
              ? `got "${delivered.payload.name}" after ${waited}`
              : `wait timed out after ${waited}`;
        else if (pause) detail = `${pause.kind} ended after ${waited}`;
        else if (delivered?.type === "event_received") detail = `with event "${delivered.payload.name}"`;
        startedAt = event.at;
        pause = undefined;
        break;
      }
      case "step_completed": {
        step = event.payload.step;
        duration = startedAt === undefined ? "" : ms(event.at - startedAt);
        detail = nextDetail(run, event);
        if (Object.keys(event.payload.writes).length)
          detail += `, wrote ${Object.keys(event.payload.writes).join(", ")}`;
        // Every kind but done and next_step is a pause before the next step.
        if (event.continuation.kind !== "done" && event.continuation.kind !== "next_step")
          pause = { at: event.at, kind: event.continuation.kind };
        break;
      }
      case "step_failed":
        step = event.payload.step;
        attempt = String(event.payload.attempt);
        duration = startedAt === undefined ? "" : ms(event.at - startedAt);
        detail = `${event.payload.reason} (${event.payload.retryable ? "will retry" : "not retried"})`;
        if (event.payload.retryable && event.payload.retry_at !== undefined)
          detail += `, asked to retry in ${ms(event.payload.retry_at - event.at)}`;
        if (event.payload.retryable) pause = { at: event.at, kind: "retry" };
        break;
      case "event_received":
        detail = `"${event.payload.name}" ${truncate(JSON.stringify(event.payload.payload ?? null), 60)}`;
        break;
      case "child_finished": {
        const { run_id: runId, workflow, status, result, error } = event.payload;
        const outcome = status === "completed" ? `result ${JSON.stringify(result ?? null)}` : (error ?? "");
        detail = `${runId.slice(0, SHORT_RUN_ID)} (${workflow}) ${status}${outcome ? `: ${truncate(outcome, 60)}` : ""}`;
        break;
      }
      case "workflow_completed":
        detail = `result ${JSON.stringify(event.payload.result)}`;
        break;
      case "workflow_failed":
        detail = `${event.payload.reason} (${event.payload.cause})`;
        break;
      case "workflow_cancelled":
        detail = event.payload.reason ? `reason: ${event.payload.reason}` : "no reason given";
        break;
      case "start_replaced":
        detail = `a later start replaced the data: ${truncate(JSON.stringify(event.payload.writes.data ?? null), 60)}`;
        break;
      case "workflow_dequeued":
        detail = `left the queue after ${ms(event.at - run.createdAt)}`;
        break;
      case "cancel_requested":
        detail = `cancel asked (${event.payload.reason}): rolling back first`;
        break;
      case "rollback_started":
        step = event.payload.step;
        attempt = String(event.payload.attempt);
        detail = `undoing the completion at seq ${event.payload.completed_seq}`;
        startedAt = event.at;
        break;
      case "rollback_completed":
        step = event.payload.step;
        duration = startedAt === undefined ? "" : ms(event.at - startedAt);
        detail = "rolled back";
        break;
      case "rollback_failed":
        step = event.payload.step;
        attempt = String(event.payload.attempt);
        duration = startedAt === undefined ? "" : ms(event.at - startedAt);
        detail = `${event.payload.reason} (${event.payload.retryable ? "will retry" : "rollback failed, going on with the next"})`;
        break;
    }
    rows.push([String(event.seq), offset, event.type, step, attempt, duration, detail]);
  }
  return rows;
}

/** What a failed run rolled back, and what it could not. */
function rollbacksInWords(run: WorkflowRunView): string {
  const done = run.rolledBack?.length ? `; rolled back ${run.rolledBack.join(", ")}` : "";
  const failed = run.rollbackFailed?.length ? `; rollback failed for ${run.rollbackFailed.join(", ")}` : "";
  return done + failed;
}

/** The run's state in words: how it ended, or what it is doing now. */
export function describeOutcome(run: WorkflowRunView): string {
  const took = ms(run.updatedAt - run.createdAt);
  switch (run.status) {
    case "completed":
      return `completed in ${took}`;
    case "failed":
      return `failed after ${took}: ${run.error}${rollbacksInWords(run)}`;
    case "cancelled":
      return `cancelled after ${took}${run.cancelReason ? `: ${run.cancelReason}` : ""}`;
    case "paused":
      return `paused${run.step ? ` at ${run.step}` : ""}${run.paused ? ` since ${utc(run.paused.at)}: ${run.paused.reason}` : ""}`;
    case "queued":
      return run.queued
        ? `queued for ${took}, waiting for ${run.queued.waitsFor}${run.queued.notBefore === undefined ? "" : ` (not before ${utc(run.queued.notBefore)})`}`
        : `queued for ${took}`;
    case "waiting":
      return run.waitingForChildren
        ? `waiting for its children (${run.waitingForChildren.finished} of ${run.waitingForChildren.total} ended)`
        : "waiting for its children";
    case "running":
      if (run.waitingFor)
        return `waiting for "${run.waitingFor.name}"${run.waitingFor.timeoutAt === undefined ? "" : ` until ${utc(run.waitingFor.timeoutAt)}`}`;
      if (run.waitingForRun)
        return `waiting for run ${run.waitingForRun.runId} to end${run.waitingForRun.timeoutAt === undefined ? "" : ` until ${utc(run.waitingForRun.timeoutAt)}`}`;
      if (run.wakeAt !== undefined) return `sleeping until ${utc(run.wakeAt)}`;
      return `running for ${took} so far`;
  }
}

/** The timeline's first lines: which run, of which workflow (and of which parent), and its state. */
export function timelineHeading(run: WorkflowRunView): string {
  const parent = run.parentRunId === undefined ? "" : `\nchild of run ${run.parentRunId}`;
  const version = run.version ? ` by version ${run.version}` : "";
  const rerun = run.rerunOf
    ? `\nrerun of ${run.rerunOf.runId}${run.rerunOf.fromStep ? ` from step ${run.rerunOf.fromStep}` : ""}`
    : "";
  return `Run ${run.id} of "${run.name}" (workflow id ${run.workflowId}), ${describeOutcome(run)}${parent}\nstarted ${new Date(run.createdAt).toISOString()}${version}${rerun}`;
}

export const CHILDREN_HEADER = ["child run", "workflow", "status", "outcome"];

/** The children a run started, one row each, in the order asked for (whole run ids: each names a run to look at). */
export function childRows(run: WorkflowRunView): string[][] {
  return (run.children ?? []).map((child) => [
    child.runId,
    child.workflow,
    child.status,
    child.status === "completed" ? truncate(JSON.stringify(child.result ?? null), 60) : truncate(child.error ?? "", 60),
  ]);
}

/** A run's events as a readable timeline under its heading, then its children when it has any. */
export function formatRunTimeline(run: WorkflowRunView): string {
  const children = childRows(run);
  const listed = children.length === 0 ? "" : `\n${table([CHILDREN_HEADER, ...children])}\n`;
  return `${timelineHeading(run)}\n\n${table([TIMELINE_HEADER, ...timelineRows(run)])}\n${listed}`;
}

/** Column widths `workflow start --wait` prints with, as rows arrive (it cannot measure rows to come). */
const FOLLOW_WIDTHS = [4, 9, 18, 12, 7, 9];

/** One timeline row with fixed widths, for printing a run's events as they happen. */
export function formatFollowedRow(row: string[]): string {
  return row
    .map((cell, i) => (i < FOLLOW_WIDTHS.length ? cell.padEnd(FOLLOW_WIDTHS[i]!) : cell))
    .join("  ")
    .trimEnd();
}

/** Where a queued run stands: how many start before it, its key, and its priority and fairness value when it has them. */
function queuedDetail(queued: NonNullable<WorkflowRunView["queued"]>): string {
  const ahead = queued.ahead === undefined ? "" : `${queued.ahead} ahead, `;
  const priority = queued.priority === undefined || queued.priority === 5 ? "" : `, priority ${queued.priority}`;
  const fairness = queued.fairness === undefined ? "" : `, fairness ${JSON.stringify(queued.fairness)}`;
  return `${ahead}key ${JSON.stringify(queued.key)}${priority}${fairness}`;
}

/** A list row's status: `running` split into `sleeping` and `waiting` (for an event) when the engine says so. */
export function listStatus(run: RunSummaryWithPause): { status: string; detail: string } {
  // Where the run is (or, once it ended, the step it ended in): what `--step` filters on.
  const at = run.step === undefined ? "" : `at ${run.step}`;
  if (run.status === "queued")
    return {
      status: "queued",
      detail: run.queued ? queuedDetail(run.queued) : "",
    };
  if (run.status === "completed") return { status: run.status, detail: "" };
  if (run.status === "waiting" && run.waitingForChildren)
    return {
      status: run.status,
      detail: `${run.waitingForChildren.finished}/${run.waitingForChildren.total} children`,
    };
  if (run.status !== "running") return { status: run.status, detail: at };
  if (run.waitingFor) return { status: "waiting", detail: `for ${run.waitingFor.name}` };
  if (run.waitingForRun) return { status: "waiting", detail: `for run ${run.waitingForRun.runId}` };
  if (run.wakeAt !== undefined) return { status: "sleeping", detail: `until ${utc(run.wakeAt).slice(11)}` };
  return { status: "running", detail: at };
}

/** Characters of a run id the list shows (as `platform dev`'s step lines do); any unique prefix names a run. */
export const SHORT_RUN_ID = 8;

/**
 * Runs as a table that fits {@link LIST_WIDTH} columns: short run ids,
 * names and details cut to fit, times in UTC to the second. `full` shows whole
 * run ids and names instead.
 */
export function formatRunList(runs: RunSummaryWithPause[], options: { full?: boolean } = {}): string {
  if (runs.length === 0) return "No workflow runs match.\n";
  const full = options.full === true;
  const rows = [["run", "workflow", "status", "created", "last event", ""]];
  for (const run of runs) {
    const { status, detail } = listStatus(run);
    rows.push([
      full ? run.id : run.id.slice(0, SHORT_RUN_ID),
      full ? run.name : truncate(run.name, 18),
      status,
      utc(run.createdAt),
      utc(run.updatedAt),
      full ? detail : truncate(detail, 15),
    ]);
  }
  const hint = full ? "" : "Run ids are shortened: any unique prefix names a run; --full shows them whole.\n";
  return table(rows) + "\n" + hint;
}
