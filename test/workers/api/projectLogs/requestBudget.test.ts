import { describe, expect, it } from "vitest";
import type { NewLogEntry } from "#src/workers/api/projectLogs/logEntry.ts";
import {
  budgetedEntries,
  flushedWindows,
  REQUEST_WINDOW_MS,
  REQUESTS_KEPT_PER_WINDOW,
  SKIPPED_PER_LINE,
  type WindowCount,
} from "#src/workers/api/projectLogs/requestBudget.ts";

const T0 = 1000 * REQUEST_WINDOW_MS;
const request = (at: number): NewLogEntry => ({ kind: "request", at, method: "GET", path: "/", status: 200, ms: 1 });
const line = (at: number, message: string): NewLogEntry => ({ kind: "console", at, level: "log", message });
const skipped = (at: number, count: number) => ({
  kind: "requests_skipped",
  at,
  count,
  keptPerWindow: REQUESTS_KEPT_PER_WINDOW,
  windowMS: REQUEST_WINDOW_MS,
});
const requests = (n: number, at = T0) => Array.from({ length: n }, () => request(at));

describe("the request budget of a project's log", () => {
  it.each<[string, NewLogEntry[], number, unknown[]]>([
    [
      "requests within a window's budget are all kept",
      requests(REQUESTS_KEPT_PER_WINDOW),
      REQUESTS_KEPT_PER_WINDOW,
      [],
    ],
    [
      "the rest of a window are counted, not kept",
      requests(REQUESTS_KEPT_PER_WINDOW + 5),
      REQUESTS_KEPT_PER_WINDOW,
      [],
    ],
    [
      "each thousand counted is written out as one line",
      requests(REQUESTS_KEPT_PER_WINDOW + 2 * SKIPPED_PER_LINE + 3),
      REQUESTS_KEPT_PER_WINDOW,
      [skipped(T0, SKIPPED_PER_LINE), skipped(T0, SKIPPED_PER_LINE)],
    ],
    [
      "a later window writes out the count of the one before, and has a budget of its own",
      [...requests(REQUESTS_KEPT_PER_WINDOW + 7), request(T0 + REQUEST_WINDOW_MS)],
      REQUESTS_KEPT_PER_WINDOW + 1,
      [skipped(T0, 7)],
    ],
  ])("%s", (_label, entries, keptRequests, counts) => {
    const stored = budgetedEntries(entries, new Map());
    expect(stored.filter((e) => e.kind === "request")).toHaveLength(keptRequests);
    expect(stored.filter((e) => e.kind === "requests_skipped")).toEqual(counts);
  });

  it("keeps every line and error of the project's, in order, through a flood", () => {
    const entries = [line(T0, "before"), ...requests(2000), line(T0 + 1, "during"), ...requests(2000)];
    const stored = budgetedEntries(entries, new Map());
    expect(stored.filter((e) => e.kind === "console").map((e) => (e as { message: string }).message)).toEqual([
      "before",
      "during",
    ]);
    expect(stored.length).toBeLessThan(REQUESTS_KEPT_PER_WINDOW + 10);
  });

  it("carries a window's count across appends, and the alarm's flush writes out what is left", () => {
    const windows = new Map<number, WindowCount>();
    budgetedEntries(requests(REQUESTS_KEPT_PER_WINDOW), windows);
    expect(budgetedEntries(requests(40), windows)).toEqual([]);
    expect(flushedWindows(windows)).toEqual([skipped(T0, 40)]);
    // Written out once: a second flush has nothing to say, and the window's budget stays spent.
    expect(flushedWindows(windows)).toEqual([]);
    expect(budgetedEntries(requests(1), windows)).toEqual([]);
  });

  it("gives a request stamped a moment before a later line no fresh budget", () => {
    const windows = new Map<number, WindowCount>();
    budgetedEntries(requests(REQUESTS_KEPT_PER_WINDOW), windows);
    budgetedEntries([line(T0 + REQUEST_WINDOW_MS, "next minute")], windows);
    expect(budgetedEntries([request(T0 + 5)], windows)).toEqual([]);
  });
});
