/**
 * What a run's reports cost the project's run index on Cloudflare's meter (issue 35, "cut the
 * writes"): the first report inserts the row and its entries in the search indexes; a later one
 * rewrites only the indexed columns that changed (SQLite rewrites an index entry for every column an
 * UPDATE sets, changed or not). Counted by the runtime's own cursors (src/objects/storageMeter.ts).
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { RunReport } from "#src/engine/storage/store.ts";
import { createSqlRunIndex } from "#src/engine/storage/sqlRunIndex.ts";
import { durableObjectSql } from "#src/objects/durableObjectSql.ts";
import { readStorageMeter, resetStorageMeter } from "#src/objects/storageMeter.ts";

const RUN: RunReport = {
  id: "rows.run00000001",
  workflowId: "rows",
  name: "rows.flow",
  status: "queued",
  step: "start",
  createdAt: 1_000,
  updatedAt: 1_000,
  lastSeq: 1,
};

// Each report follows the one before, on one run; `rows` is what it writes.
const REPORTS: { report: string; change: Partial<RunReport>; rows: number }[] = [
  // The table's row, run_id's unique index, by_status, by_status_step, by_name (no by_created, by_step).
  { report: "queued (first report: inserted)", change: {}, rows: 5 },
  // The row, and its entries in by_status and by_status_step.
  { report: "running at the same step", change: { status: "running", updatedAt: 1_100, lastSeq: 2 }, rows: 3 },
  // The row, and its entry in by_status_step.
  {
    report: "running at the next step",
    change: { status: "running", step: "charge", updatedAt: 1_200, lastSeq: 4 },
    rows: 2,
  },
  // Nothing indexed changed: the row alone.
  {
    report: "running, the same position again",
    change: { status: "running", step: "charge", updatedAt: 1_300, lastSeq: 5 },
    rows: 1,
  },
  // An older report than the row holds: nothing.
  { report: "an older report", change: { status: "queued", lastSeq: 3 }, rows: 0 },
  // The row, its entries in by_status and by_status_step, and its new one in the expiry index.
  {
    report: "completed",
    change: { status: "completed", step: "charge", updatedAt: 1_400, lastSeq: 7, expiresAt: 99_000 },
    rows: 4,
  },
  // The run ended there: a late report changes nothing.
  { report: "running again, after its end", change: { status: "running", step: "charge", lastSeq: 8 }, rows: 0 },
];

describe("WorkflowRunIndexActor: rows written per report", () => {
  it("writes a report's changed index entries only, and nothing for a stale or late one", async () => {
    const stub = env.WORKFLOW_RUN_INDEX.get(env.WORKFLOW_RUN_INDEX.idFromName("rows-written"));
    const written = await runInDurableObject(stub, (_instance, state) => {
      const index = createSqlRunIndex(durableObjectSql(state.storage));
      return REPORTS.map(({ report, change }) => {
        resetStorageMeter();
        state.storage.transactionSync(() => index.record([{ ...RUN, ...change }]));
        return { report, rows: readStorageMeter().rowsWritten };
      });
    });
    expect(written).toEqual(REPORTS.map(({ report, rows }) => ({ report, rows })));
  });

  it("a run whose first report is its end (a short run) writes 6 rows there", async () => {
    const stub = env.WORKFLOW_RUN_INDEX.get(env.WORKFLOW_RUN_INDEX.idFromName("rows-written-short"));
    const rows = await runInDurableObject(stub, (_instance, state) => {
      const index = createSqlRunIndex(durableObjectSql(state.storage));
      resetStorageMeter();
      // The row, run_id's unique index, by_status, by_status_step, by_name and the expiry index.
      state.storage.transactionSync(() =>
        index.record([{ ...RUN, status: "completed", lastSeq: 4, expiresAt: 99_000 }]),
      );
      return readStorageMeter().rowsWritten;
    });
    expect(rows).toBe(6);
  });
});
