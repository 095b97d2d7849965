import { type LogEntry, logEntryLines } from "../../../console/public/console/logLines.js";
import { followWorkflowSteps } from "../dev/followWorkflowSteps.ts";
import { callPlatformApi, type PlatformTarget } from "../platformTarget.ts";

/** The recent history `platform logs` prints first. */
const HISTORY = 100;
/** How long one read of a followed log waits for something new. */
const WAIT_MS = 10_000;
/** Without any entry to date it, how far back the runs' step lines go. */
const STEP_HISTORY_MS = 60 * 60_000;

/** One printed line: the time of what it tells of, and the text. */
export interface LogLine {
  at: number;
  text: string;
}

/** `12:00:03 GET / → 200 in 3 ms`: each line with the local time of day, to the second. */
export function timedLine(line: LogLine): string {
  const time = new Date(line.at).toTimeString().slice(0, 8);
  return `${time} ${line.text}`;
}

/** Reads the project's log (`GET /projects/:slug/logs`); a refusal is a CliError with the API's words. */
function readLog(target: PlatformTarget, query: string): Promise<{ entries: LogEntry[]; cursor: number }> {
  return callPlatformApi(target, "GET", `/projects/${encodeURIComponent(target.slug)}/logs?${query}`);
}

/**
 * `platform logs`: the project's recent log (its requests, console output
 * and uncaught errors, from the platform's log of it) and its workflow
 * steps (from its runs' events) in time order; with `follow`, then each new
 * line as it comes until `signal` aborts. Lines go to `print`.
 */
export async function showProjectLog(
  target: PlatformTarget,
  options: { follow: boolean; print: (line: LogLine) => void; signal?: AbortSignal; now?: () => number },
): Promise<void> {
  const now = options.now ?? Date.now;
  const recent = await readLog(target, `limit=${HISTORY}`);
  const history: LogLine[] = logEntryLines(recent.entries);
  const since = recent.entries[0]?.at ?? now() - STEP_HISTORY_MS;
  let collecting = true;
  const steps = followWorkflowSteps({
    apiUrl: target.apiUrl,
    token: target.token,
    slug: target.slug,
    since,
    print: (text, at) => (collecting ? history.push({ at, text }) : options.print({ at, text })),
  });
  try {
    await steps.tick();
    collecting = false;
    // Sorted by time; lines of one entry or one step keep their order (the sort is stable).
    for (const line of history.sort((a, b) => a.at - b.at)) options.print(line);
    if (!options.follow) return;
    let cursor = recent.cursor;
    while (!options.signal?.aborted) {
      let page: { entries: LogEntry[]; cursor: number };
      try {
        page = await readLog(target, `after=${cursor}&waitMS=${WAIT_MS}`);
      } catch (error) {
        if (options.signal?.aborted) return;
        throw error;
      }
      for (const line of logEntryLines(page.entries)) options.print(line);
      cursor = page.cursor;
    }
  } finally {
    steps.stop();
  }
}
