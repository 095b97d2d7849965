import type { NewLogEntry } from "./logEntry.ts";

/** The window request lines are budgeted by (by the time the runtime stamped each). */
export const REQUEST_WINDOW_MS = 60_000;
/** The request lines one window keeps one by one; the rest of it are counted. */
export const REQUESTS_KEPT_PER_WINDOW = 100;
/** A window's count is written out each time it reaches this many (a flood reads as one line per thousand). */
export const SKIPPED_PER_LINE = 1000;

/** What one window has had so far: request lines kept, and requests counted since its last count line. */
export interface WindowCount {
  kept: number;
  skipped: number;
}

function skippedLine(window: number, count: number): NewLogEntry {
  return {
    kind: "requests_skipped",
    at: window * REQUEST_WINDOW_MS,
    count,
    keptPerWindow: REQUESTS_KEPT_PER_WINDOW,
    windowMS: REQUEST_WINDOW_MS,
  };
}

/**
 * A count line for every window before `before` with requests counted and not yet written out (their
 * counts start again). The window just before `before` keeps its tally of kept lines: a request stamped
 * a moment earlier than a line already seen (traces arrive out of order) gets no fresh budget.
 */
export function flushedWindows(windows: Map<number, WindowCount>, before = Number.POSITIVE_INFINITY): NewLogEntry[] {
  const lines: NewLogEntry[] = [];
  const newest = Math.max(...windows.keys());
  for (const [window, count] of [...windows].sort(([a], [b]) => a - b)) {
    if (window >= before) continue;
    if (count.skipped > 0) lines.push(skippedLine(window, count.skipped));
    count.skipped = 0;
    if (window < Math.min(before, newest + 1) - 1) windows.delete(window);
  }
  return lines;
}

/**
 * What of `entries` a project's log stores, in order: the project's own
 * lines and errors all (their budget is the log's retention, apart from the
 * requests'), the first {@link REQUESTS_KEPT_PER_WINDOW} request lines of
 * each window, and for the rest a count: one line per
 * {@link SKIPPED_PER_LINE}, and the remainder once a later window begins (or
 * the log's alarm flushes it). So a flood of requests costs the log a few
 * lines, never the lines before it. `windows` is the running count, updated
 * in place (the caller keeps it).
 */
export function budgetedEntries(entries: readonly NewLogEntry[], windows: Map<number, WindowCount>): NewLogEntry[] {
  const stored: NewLogEntry[] = [];
  for (const entry of entries) {
    const window = Math.floor(entry.at / REQUEST_WINDOW_MS);
    stored.push(...flushedWindows(windows, window));
    if (entry.kind !== "request") {
      stored.push(entry);
      continue;
    }
    const count = windows.get(window) ?? { kept: 0, skipped: 0 };
    windows.set(window, count);
    if (count.kept < REQUESTS_KEPT_PER_WINDOW) {
      count.kept += 1;
      stored.push(entry);
      continue;
    }
    count.skipped += 1;
    if (count.skipped === SKIPPED_PER_LINE) {
      stored.push(skippedLine(window, count.skipped));
      count.skipped = 0;
    }
  }
  return stored;
}
