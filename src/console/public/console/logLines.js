// @ts-check
// A project's log as lines of text: its requests, its console output and errors (the platform's
// log of it, GET /projects/:slug/logs) and its workflow steps (from the runs' own events). One home
// for these words: the console's Logs view, `platform logs` and `platform dev`'s terminal print them.
// No DOM here, so the CLI and Node tests import it as is.

/**
 * @typedef {{ method: string, path: string, status: number, ms: number }} RequestRecord
 * @typedef {{ seq: number, at: number, kind: "request" } & RequestRecord} RequestEntry
 * @typedef {{ seq: number, at: number, kind: "console", level: string, message: string, stack?: string }} ConsoleEntry
 * @typedef {{ seq: number, at: number, kind: "exception", name: string, message: string, stack?: string }} ExceptionEntry
 * @typedef {{ seq: number, at: number, kind: "requests_skipped", count: number, keptPerWindow: number, windowMS: number }} SkippedRequestsEntry
 * @typedef {RequestEntry | SkippedRequestsEntry | ConsoleEntry | ExceptionEntry} LogEntry
 * @typedef {{ name?: string, message?: string, stack?: string, cause?: StepError }} StepError
 * @typedef {{ seq: number, type: string, at: number, payload: Record<string, any> }} RunEvent
 * @typedef {{ id: string, name: string, status: string, updatedAt: number, events: RunEvent[] }} RunView
 * @typedef {{ id: string, status: string, updatedAt: number }} RunSummary
 */

/** How many frames of a stack a log line shows beneath it. */
export const STACK_FRAMES = 8;

/** `GET /api/hello/Ada → 200 in 3 ms` @param {RequestRecord} r */
export function formatRequestLine(r) {
  return `${r.method} ${r.path} → ${r.status} in ${r.ms} ms`;
}

/** The first 8 characters of a run id: enough to tell runs apart, and a prefix to name one by. @param {string} runId */
export function shortRunId(runId) {
  return runId.slice(0, 8);
}

/** A pause as a person says it: `250 ms`, `5 s`, `1.5 min`, `2 h`, `3 d`. @param {number} ms */
export function spokenDuration(ms) {
  /** @type {[number, string][]} */
  const units = [
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

/**
 * Whether a frame is the platform's own (its runtime, engine and actors: the package installed in the
 * project, or the platform's sources themselves), not the project's.
 * @param {string} frame
 */
export function isPlatformFrame(frame) {
  return /node_modules\/platform\/|\/src\/(runtime|engine|objects|contracts|core)\//.test(frame);
}

/**
 * A stack's frames (its `at …` lines), indented beneath a log line, at most {@link STACK_FRAMES};
 * each run of the platform's own frames is one line, `… 3 platform frames`, unless `platformFrames`.
 * @param {string | undefined} stack
 * @param {boolean} [platformFrames]
 * @returns {string[]}
 */
export function stackLines(stack, platformFrames = false) {
  if (!stack) return [];
  /** @type {string[]} */
  const frames = [];
  let hidden = 0;
  for (const line of stack.split("\n")) {
    const frame = line.trim();
    if (!frame.startsWith("at ")) continue;
    if (!platformFrames && isPlatformFrame(frame)) {
      hidden++;
      continue;
    }
    if (hidden) frames.push(`… ${hidden} platform frame${hidden === 1 ? "" : "s"}`);
    hidden = 0;
    frames.push(frame);
  }
  if (hidden) frames.push(`… ${hidden} platform frame${hidden === 1 ? "" : "s"}`);
  const shown = frames.slice(0, STACK_FRAMES).map((frame) => `    ${frame}`);
  if (frames.length > STACK_FRAMES) shown.push(`    … ${frames.length - STACK_FRAMES} more`);
  return shown;
}

/**
 * A printed message with each stack in it (its runs of `at …` lines) shown as {@link stackLines} shows a
 * log entry's: how `platform dev` prints what workerd logged (a handler's error, an uncaught one).
 * @param {string} message
 * @param {boolean} [platformFrames]
 * @returns {string}
 */
export function messageWithStackLines(message, platformFrames = false) {
  /** @type {string[]} */
  const lines = [];
  /** @type {string[]} */
  let frames = [];
  const flush = () => {
    lines.push(...stackLines(frames.join("\n"), platformFrames));
    frames = [];
  };
  for (const line of message.split("\n")) {
    if (line.trim().startsWith("at ")) {
      frames.push(line);
      continue;
    }
    flush();
    lines.push(line);
  }
  flush();
  return lines.join("\n");
}

/**
 * One entry of the platform's log of a project, as lines: a request (or a count of requests past
 * the log's budget), what the project logged
 * (with the stack of an error it logged), or an uncaught exception.
 * @param {LogEntry} entry
 * @param {boolean} [platformFrames] show the platform's own frames of a stack, not one line for them
 * @returns {string[]}
 */
export function formatLogEntry(entry, platformFrames = false) {
  switch (entry.kind) {
    case "request":
      return [formatRequestLine(entry)];
    case "requests_skipped":
      return [
        `… ${entry.count.toLocaleString("en-US")} more requests in this ${spokenDuration(entry.windowMS)} window, ` +
          `counted, not logged one by one (the log keeps the first ${entry.keptPerWindow} of each)`,
      ];
    case "console": {
      const prefix = entry.level === "log" || entry.level === "info" ? "" : `${entry.level}: `;
      return [`${prefix}${entry.message}`, ...stackLines(entry.stack, platformFrames)];
    }
    case "exception":
      return [`Uncaught ${entry.name}: ${entry.message}`, ...stackLines(entry.stack, platformFrames)];
  }
  return [];
}

/**
 * Log entries as lines, each with the time of its entry: what the console's Logs view and
 * `platform logs` print.
 * @param {readonly LogEntry[]} entries
 * @param {boolean} [platformFrames]
 * @returns {{ at: number, text: string }[]}
 */
export function logEntryLines(entries, platformFrames = false) {
  return entries.flatMap((entry) => formatLogEntry(entry, platformFrames).map((text) => ({ at: entry.at, text })));
}

/** What follows a completed step: the next step, and whether the run sleeps or waits for an event first. @param {RunEvent} event */
function nextPart(event) {
  const { next_step: next, wake_at: wakeAt, waiting_for: waitingFor, timeout_at: timeoutAt } = event.payload;
  if (next === undefined) return "done";
  if (waitingFor !== undefined)
    return `${next}, waits for "${waitingFor}"${timeoutAt === undefined ? "" : ` (at most ${spokenDuration(timeoutAt - event.at)})`}`;
  if (wakeAt !== undefined) return `${next}, sleeps ${spokenDuration(wakeAt - event.at)}`;
  return next;
}

/**
 * What a failed attempt threw, as the run's view has it (`step_failed`'s `error`: name, message and
 * the stack, which the platform maps to the project's sources): its name when the reason lacks it,
 * and its frames beneath.
 * @param {RunEvent} event
 * @param {boolean} [platformFrames]
 */
function failure(event, platformFrames = false) {
  /** @type {StepError | undefined} */
  const error = event.payload.error;
  const reason = String(event.payload.reason);
  const named =
    error?.name && error.name !== "Error" && !reason.startsWith(error.name) ? `${error.name}: ${reason}` : reason;
  return { text: named, frames: stackLines(error?.stack, platformFrames) };
}

/**
 * One line per transition of a run, from its events in seq order:
 * `run 3f2a9c1d: charge#2 completed in 3 ms → pack`, and when the run sleeps or waits for an event,
 * receives one or is cancelled; a failed attempt's stack beneath its line. `step_started` prints
 * nothing itself (the line that ends the attempt says how long it ran); `before` are the run's
 * earlier events, for those attempt numbers and times.
 * @param {string} runId
 * @param {string} workflowName
 * @param {readonly RunEvent[]} events
 * @param {readonly RunEvent[]} [before]
 * @param {boolean} [platformFrames] show the platform's own frames of a failed attempt's stack
 * @returns {string[]}
 */
export function formatStepLines(runId, workflowName, events, before = [], platformFrames = false) {
  const run = `run ${shortRunId(runId)}`;
  /** @type {string[]} */
  const lines = [];
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
      case "step_failed": {
        const { text, frames } = failure(event, platformFrames);
        lines.push(
          `${run}: ${event.payload.step}#${event.payload.attempt} failed${took}: ${text}${event.payload.retryable ? " (will retry)" : ""}`,
          ...frames,
        );
        break;
      }
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

/**
 * What prints each workflow step transition as it happens, from the API's workflow routes, one
 * `tick()` at a time: the 20 newest runs, and the events of each that is running (or waiting for
 * its children) or whose `updatedAt` moved. Such a run is read on every tick because its steps (or
 * its children's ends) do not move the list's
 * `updatedAt` (the run index hears of a run when it starts and ends), so a long run's steps are
 * printed as they happen, not when it ends. `since` (epoch ms): on the first tick, events from
 * then on are printed too (a log's recent history); without it the first tick only learns what
 * exists. `print` gets each line with the time of the event it tells of.
 * @param {{
 *   slug: string,
 *   get: <T>(pathAndQuery: string) => Promise<T | null>,
 *   print: (line: string, at: number) => void,
 *   active?: () => boolean,
 *   since?: number,
 *   platformFrames?: boolean,
 * }} input
 * @returns {{ tick(): Promise<void> }}
 */
export function createStepFollower(input) {
  const base = `/projects/${encodeURIComponent(input.slug)}/workflows`;
  /** Per run: the last `updatedAt` seen, and the events already accounted for (null: those up to `since`). @type {Map<string, { updatedAt: number, seen: RunEvent[] | null, since: number }>} */
  const runs = new Map();
  let first = true;
  let busy = false;
  /** @param {RunView} view @param {readonly RunEvent[]} before @param {readonly RunEvent[]} fresh */
  const show = (view, before, fresh) => {
    for (const event of fresh)
      for (const line of formatStepLines(
        view.id,
        view.name,
        [event],
        [...before, ...fresh.filter((e) => e.seq < event.seq)],
        input.platformFrames,
      ))
        input.print(line, event.at);
  };
  return {
    async tick() {
      if (busy || (input.active && !input.active())) return;
      busy = true;
      try {
        /** @type {{ runs: RunSummary[] } | null} */
        const page = await input.get(`${base}?limit=20`);
        if (!page) return;
        for (const run of page.runs) {
          const known = runs.get(run.id);
          if (first && (input.since === undefined || run.updatedAt < input.since)) {
            runs.set(run.id, { updatedAt: run.updatedAt, seen: null, since: run.updatedAt });
            continue;
          }
          if (known && known.updatedAt === run.updatedAt && run.status !== "running" && run.status !== "waiting")
            continue;
          /** @type {RunView | null} */
          const view = await input.get(`${base}/${encodeURIComponent(run.id)}`);
          if (!view) continue;
          const since = first && input.since !== undefined ? input.since - 1 : 0;
          const state = known ?? { updatedAt: 0, seen: first ? null : [], since };
          const before = state.seen ?? view.events.filter((e) => e.at <= state.since);
          const fresh = view.events.filter((e) => e.seq > (before[before.length - 1]?.seq ?? 0));
          show(view, before, fresh);
          runs.set(run.id, { updatedAt: run.updatedAt, seen: view.events, since: state.since });
        }
        // Newest first: a run that left the page never comes back to it.
        const listed = new Set(page.runs.map((run) => run.id));
        for (const id of runs.keys()) if (!listed.has(id)) runs.delete(id);
        first = false;
      } catch {
        // the platform is busy or stopping: the next tick catches up
      } finally {
        busy = false;
      }
    },
  };
}
