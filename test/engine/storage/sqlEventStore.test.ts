import { DatabaseSync } from "node:sqlite";
import { nodeSyncSql } from "#src/runtime/node/nodeSyncSql.ts";
import { createSqlEventStore } from "#src/engine/storage/sqlEventStore.ts";
import { RUN_TABLE_SCHEMA } from "#src/engine/storage/sqlRunIndex.ts";
import { describe, expect, it } from "vitest";
import { describeEventStoreConformance } from "#test/conformance/eventStoreConformance.ts";

describeEventStoreConformance("SQL store on node:sqlite", () => {
  const db = new DatabaseSync(":memory:");
  return { store: createSqlEventStore(nodeSyncSql(db)), close: () => db.close() };
});

describeEventStoreConformance(
  "SQL store on node:sqlite, events of an append packed in one row (a run actor's layout)",
  () => {
    const db = new DatabaseSync(":memory:");
    return {
      store: createSqlEventStore(nodeSyncSql(db), { manyRuns: false, packRows: true }),
      close: () => db.close(),
    };
  },
);

describe("SQL store: a run actor's runs table made before (rowid position, run_id's unique index)", () => {
  it("goes on: a run created after numbers on from the old rows, and both list in order", () => {
    const db = new DatabaseSync(":memory:");
    const sql = nodeSyncSql(db);
    const created = (runId: string, at: number) =>
      ({
        runId,
        workflowId: "w",
        seq: 1,
        type: "workflow_created",
        payload: { workflowName: "flow", writes: {} },
        at,
      }) as const;
    // The old table, as the actor made it before its runs table was keyed by run_id.
    sql.script(RUN_TABLE_SCHEMA);
    const before = createSqlEventStore(sql, { manyRuns: false });
    before.createRunIfNoActive(created("w.old", 5));
    before.append([
      { runId: "w.old", workflowId: "w", seq: 2, type: "workflow_cancelled", payload: { reason: "r" }, at: 6 },
    ]);
    const after = createSqlEventStore(sql, { manyRuns: false, packRows: true });
    expect(after.createRunIfNoActive(created("w.new", 5))).toEqual({ created: true });
    expect(db.prepare("SELECT run_id, position FROM _workflow_runs ORDER BY position").all()).toEqual([
      { run_id: "w.old", position: 1 },
      { run_id: "w.new", position: 2 },
    ]);
    expect(after.listRuns({ limit: 10 }).runs.map((run) => run.id)).toEqual(["w.new", "w.old"]);
    db.close();
  });
});
