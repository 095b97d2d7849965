/**
 * A run list whose filter names no indexed column but step and time (the whole list, a step alone, a
 * time range, an error) reads the newest runs of each status from `by_status` / `by_status_step` and
 * merges them (src/engine/storage/sqlRunIndex.ts): the same page, in the same order, as sorting every
 * matching run, and never a scan of the table.
 */
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import type { RunFilter } from "#src/engine/storage/runQuery.ts";
import { createSqlRunIndex } from "#src/engine/storage/sqlRunIndex.ts";
import { RUN_STATUSES, type RunReport } from "#src/engine/storage/store.ts";
import { nodeSyncSql } from "#src/runtime/node/nodeSyncSql.ts";

const STEPS = ["start", "charge", "ship"];
// 140 runs over every status, three steps and 40 milliseconds: many runs share a millisecond (ties
// are listed newest recorded first), some failed with an error.
const RUNS: RunReport[] = Array.from({ length: 140 }, (_, i) => {
  const status = RUN_STATUSES[(i * 5) % RUN_STATUSES.length]!;
  return {
    id: `run-${String(i).padStart(3, "0")}`,
    workflowId: `wf-${i}`,
    name: "flow",
    status,
    step: STEPS[i % STEPS.length]!,
    createdAt: 1_000 + ((i * 7) % 40),
    updatedAt: 2_000,
    lastSeq: 1,
    ...(status === "failed" ? { error: i % 2 ? "card_declined" : "timeout" } : {}),
  };
});

const FILTERS: { filter: string; of: RunFilter }[] = [
  { filter: "none", of: {} },
  { filter: "a step alone", of: { step: "charge" } },
  { filter: "a time range", of: { since: 1_010, until: 1_030 } },
  { filter: "a step and a time range", of: { step: "ship", since: 1_005 } },
  { filter: "an error", of: { error: "card" } },
];

function open() {
  const db = new DatabaseSync(":memory:");
  const index = createSqlRunIndex(nodeSyncSql(db));
  index.record(RUNS);
  return { db, index };
}

/** What a list must answer: every matching run, newest first, ties newest recorded first. */
function sortedMatches(of: RunFilter): string[] {
  return RUNS.map((run, recorded) => ({ run, recorded }))
    .filter(
      ({ run }) =>
        (of.step === undefined || run.step === of.step) &&
        (of.since === undefined || run.createdAt >= of.since) &&
        (of.until === undefined || run.createdAt < of.until) &&
        (of.error === undefined || (run.error ?? "").includes(of.error)),
    )
    .sort((a, b) => b.run.createdAt - a.run.createdAt || b.recorded - a.recorded)
    .map(({ run }) => run.id);
}

describe("run index: newest first, merged over statuses", () => {
  it.each(FILTERS)("filter $filter: every page, in order, as sorting every matching run", ({ of }) => {
    const { index } = open();
    const listed: string[] = [];
    let cursor: string | undefined;
    do {
      const page = index.listRuns({ ...of, limit: 9, ...(cursor ? { cursor } : {}) });
      listed.push(...page.runs.map((run) => run.id));
      cursor = page.cursor;
    } while (cursor);
    expect(listed).toEqual(sortedMatches(of));
    expect(listed.length).toBeGreaterThan(0);
  });

  it.each(FILTERS)("filter $filter: the ids a bulk operation matches, and their count", ({ of }) => {
    const { index } = open();
    const all = sortedMatches(of);
    expect(index.matchRunIds(of, 1_000)).toEqual({ runIds: all, matched: all.length });
    expect(index.matchRunIds(of, 5)).toEqual({ runIds: all.slice(0, 5), matched: all.length });
  });

  it("reads through an index, never a scan of the table", () => {
    const { db } = open();
    const plans: string[] = [];
    const spy = nodeSyncSql(db);
    const index = createSqlRunIndex(
      {
        ...spy,
        all: (query, ...params) => {
          if (query.startsWith("SELECT"))
            for (const row of db.prepare(`EXPLAIN QUERY PLAN ${query}`).all(...(params as never[])))
              plans.push(String(row.detail));
          return spy.all(query, ...params);
        },
      },
      { schema: false },
    );
    for (const { of } of FILTERS) index.listRuns({ ...of, limit: 9 });
    expect(plans.filter((detail) => detail.startsWith("SEARCH _workflow_runs"))).not.toHaveLength(0);
    expect(plans.filter((detail) => /^SCAN _workflow_runs\b/.test(detail))).toEqual([]);
  });
});
