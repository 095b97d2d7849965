import { logEntryLines } from "../../../console/public/console/logLines.js";
import { followWorkflowSteps } from "../dev/output/followWorkflowSteps.ts";
import type { PlatformTarget } from "../platformTarget.ts";
import { abortableSleep, logReader } from "./logReader.ts";

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

/**
 * `platform logs`: the project's recent log (its requests, console output
 * and uncaught errors, from the platform's log of it) and its workflow
 * steps (from its runs' events) in time order; with `follow`, then each new
 * line as it comes until `signal` aborts, waiting out a platform that is
 * starting, restarting or busy (logReader.ts: `note` says so in one line)
 * and going on from the last cursor. Lines go to `print`. `target` is
 * resolved again for each read after a failure.
 */
export async function showProjectLog(
  target: () => PlatformTarget,
  options: {
    follow: boolean;
    print: (line: LogLine) => void;
    /** Show the platform's own frames of stacks, not one `… N platform frames` line for each run of them. */
    platformFrames?: boolean;
    note?: (text: string) => void;
    signal?: AbortSignal;
    now?: () => number;
    sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
    request?: Parameters<typeof logReader>[0]["request"];
  },
): Promise<void> {
  const now = options.now ?? Date.now;
  const reader = logReader({
    target,
    retry: options.follow,
    note: options.note ?? (() => {}),
    sleep: options.sleep ?? abortableSleep,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.request ? { request: options.request } : {}),
  });
  const first = await reader.read(`limit=${HISTORY}`);
  if (!first) return;
  const { page: recent, target: found } = first;
  const platformFrames = options.platformFrames === true;
  const history: LogLine[] = logEntryLines(recent.entries, platformFrames);
  const since = recent.entries[0]?.at ?? now() - STEP_HISTORY_MS;
  let collecting = true;
  const steps = followWorkflowSteps({
    apiUrl: found.apiUrl,
    token: found.token,
    slug: found.slug,
    since,
    platformFrames,
    print: (text, at) => (collecting ? history.push({ at, text }) : options.print({ at, text })),
  });
  try {
    await steps.tick();
    collecting = false;
    // Sorted by time; lines of one entry or one step keep their order (the sort is stable).
    for (const line of history.sort((a, b) => a.at - b.at)) options.print(line);
    if (!options.follow) return;
    let cursor = recent.cursor;
    for (;;) {
      const next = await reader.read(`after=${cursor}&waitMS=${WAIT_MS}`);
      if (!next) return;
      for (const line of logEntryLines(next.page.entries, platformFrames)) options.print(line);
      cursor = next.page.cursor;
    }
  } finally {
    steps.stop();
  }
}
