/**
 * Which indexes each SQL store keeps, and the migration of a database made
 * before (issue 35, "cut the writes"): each index is a row written per row
 * of its table, so a store keeps only the ones its queries read, and drops
 * the others on open without touching a row of the log or of the runs.
 */
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import type { StoredEvent } from "#src/engine/execution/events.ts";
import { createSqlEventStore } from "#src/engine/storage/sqlEventStore.ts";
import { createSqlRunIndex } from "#src/engine/storage/sqlRunIndex.ts";
import { nodeSyncSql } from "#src/runtime/node/nodeSyncSql.ts";

const EVENT_INDEXES = ["_workflow_events_run_seq_desc", "_workflow_events_workflow_id"];
const SEARCH_INDEXES = [
  "_workflow_runs_by_name",
  "_workflow_runs_by_rerun",
  "_workflow_runs_by_status",
  "_workflow_runs_by_status_step",
  "_workflow_runs_by_version",
  "_workflow_runs_expiry",
];
const RUN_ID_INDEXES = ["_workflow_runs_live_ids", "_workflow_runs_workflow_id"];
// Indexes a later version retired (a list merges the newest of each status instead).
const RETIRED_SEARCH_INDEXES = ["_workflow_runs_by_created", "_workflow_runs_by_step"];

/** Every index an earlier version made, on the tables as they were then (the log with its rowid). */
const MADE_BEFORE = `
  CREATE TABLE _workflow_events (run_id TEXT NOT NULL, seq INTEGER NOT NULL, workflow_id TEXT NOT NULL, type TEXT NOT NULL,
    payload TEXT NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (run_id, seq));
  CREATE INDEX _workflow_events_run_seq_desc ON _workflow_events (run_id, seq DESC);
  CREATE INDEX _workflow_events_workflow_id ON _workflow_events (workflow_id);
  CREATE TABLE _workflow_runs (position INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL UNIQUE, workflow_id TEXT NOT NULL,
    name TEXT NOT NULL, status TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, last_seq INTEGER NOT NULL DEFAULT 0,
    step TEXT NOT NULL DEFAULT 'start', version TEXT, error TEXT, rerun_of TEXT, rerun_from_step TEXT, retention_ms INTEGER, expires_at INTEGER);
  CREATE INDEX _workflow_runs_status ON _workflow_runs (status);
  ${[...SEARCH_INDEXES, ...RETIRED_SEARCH_INDEXES, ...RUN_ID_INDEXES].map((name) => `CREATE INDEX ${name} ON _workflow_runs (workflow_id, created_at);`).join("\n")}
  INSERT INTO _workflow_events VALUES ('r1', 1, 'w1', 'workflow_created', '{"workflowName":"w","writes":{}}', 5);
  INSERT INTO _workflow_events VALUES ('r1', 2, 'w1', 'step_started', '{"step":"start","attempt":1}', 6);
  INSERT INTO _workflow_runs (run_id, workflow_id, name, status, created_at, updated_at, last_seq, step)
    VALUES ('r1', 'w1', 'w', 'running', 5, 6, 2, 'start');`;

const indexesOf = (db: DatabaseSync) =>
  db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex%' ORDER BY name")
    .all()
    .map((row) => row.name);

const STORES = [
  {
    store: "a run actor's event store (manyRuns: false)",
    open: (db: DatabaseSync) => createSqlEventStore(nodeSyncSql(db), { manyRuns: false }),
    fresh: [],
    madeBefore: [],
  },
  {
    store: "one database of a project's runs (node:sqlite: the spec's log indexes, every run index)",
    open: (db: DatabaseSync) => createSqlEventStore(nodeSyncSql(db)),
    fresh: [...EVENT_INDEXES, ...SEARCH_INDEXES, ...RUN_ID_INDEXES].sort(),
    madeBefore: [...EVENT_INDEXES, ...SEARCH_INDEXES, ...RUN_ID_INDEXES].sort(),
  },
  {
    store: "the Durable Object backend's run index (search only)",
    open: (db: DatabaseSync) => createSqlRunIndex(nodeSyncSql(db)),
    fresh: [...SEARCH_INDEXES].sort(),
    // The index actor's database has no log; the log's indexes are not its to drop.
    madeBefore: [...EVENT_INDEXES, ...SEARCH_INDEXES].sort(),
  },
] as const;

describe("SQL stores: the indexes each keeps", () => {
  it.each(STORES)("a fresh $store", ({ open, fresh }) => {
    const db = new DatabaseSync(":memory:");
    open(db);
    expect(indexesOf(db)).toEqual(fresh);
    db.close();
  });

  it.each(STORES)(
    "$store made before: the indexes it does not read are dropped on open, every row kept",
    ({ open, madeBefore }) => {
      const db = new DatabaseSync(":memory:");
      db.exec(MADE_BEFORE);
      const eventsBefore = db.prepare("SELECT * FROM _workflow_events ORDER BY seq").all();
      const runsBefore = db.prepare("SELECT * FROM _workflow_runs").all();
      open(db);
      expect(indexesOf(db)).toEqual(madeBefore);
      expect(db.prepare("SELECT * FROM _workflow_events ORDER BY seq").all()).toEqual(eventsBefore);
      expect(db.prepare("SELECT * FROM _workflow_runs").all()).toEqual(runsBefore);
      db.close();
    },
  );

  it("a run actor's log made before stays readable and goes on after the migration", () => {
    const db = new DatabaseSync(":memory:");
    db.exec(MADE_BEFORE);
    const store = createSqlEventStore(nodeSyncSql(db), { manyRuns: false });
    expect(store.events("r1").map((event) => event.type)).toEqual(["workflow_created", "step_started"]);
    expect(store.getRun("r1")).toMatchObject({ status: "running", step: "start" });
    const completed = [
      { runId: "r1", workflowId: "w1", seq: 3, type: "step_completed", payload: { step: "start", writes: {} }, at: 7 },
      { runId: "r1", workflowId: "w1", seq: 4, type: "workflow_completed", payload: { result: 1 }, at: 7 },
    ] as StoredEvent[];
    expect(store.append(completed)).toEqual({ appended: true });
    expect(store.lastEvent("r1")).toMatchObject({ seq: 4, type: "workflow_completed" });
    expect(store.getRun("r1")).toMatchObject({ status: "completed" });
    // The claim race keeps its answer without the indexes: a seq taken is refused.
    expect(store.append([{ ...completed[0]!, seq: 4 }])).toMatchObject({ appended: false });
    db.close();
  });
});
