/**
 * A run actor deployed before the writes were cut (issue 35) holds the log's two secondary indexes
 * and, older still, the runs table's list indexes. On start it drops them: its runs stay readable,
 * a run in flight goes on, and from then on an event costs one row written, not three.
 */
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import type { StoredEvent } from "#src/engine/execution/events.ts";
import { createSqlEventStore } from "#src/engine/storage/sqlEventStore.ts";
import { workflow } from "#src/engine/api/workflowApi.ts";
import { durableObjectSql } from "#src/objects/durableObjectSql.ts";
import { readStorageMeter, resetStorageMeter } from "#src/objects/storageMeter.ts";
import { actorLog, actorNamed, actorOfRun, waitForLog } from "#test/support/workerd/index.ts";
import { expectWellFormed, START_FINISH_LOG } from "#test/support/workflow/index.ts";
import { gates, register, settled, shape, testClock, useActorTestHost } from "./WorkflowRun.fixture.ts";

useActorTestHost();

/** What an actor made before created beside its tables. */
const INDEXES_MADE_BEFORE = `
  CREATE INDEX IF NOT EXISTS _workflow_events_run_seq_desc ON _workflow_events (run_id, seq DESC);
  CREATE INDEX IF NOT EXISTS _workflow_events_workflow_id ON _workflow_events (workflow_id);
  CREATE INDEX IF NOT EXISTS _workflow_runs_by_status ON _workflow_runs (status, created_at);
  CREATE INDEX IF NOT EXISTS _workflow_runs_live_ids ON _workflow_runs (workflow_id) WHERE status IN ('queued', 'running', 'waiting', 'paused');
  CREATE INDEX IF NOT EXISTS _workflow_runs_workflow_id ON _workflow_runs (workflow_id, position);`;

/** The actor's indexes beyond the ones SQLite makes for its keys. */
const indexesOf = (stub: DurableObjectStub) =>
  runInDurableObject(stub, (_instance, state) =>
    [
      ...state.storage.sql.exec<{ name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex%' ORDER BY name",
      ),
    ].map((row) => row.name),
  );

describe("WorkflowRunActor: an actor made before the writes were cut", () => {
  beforeEach(() => register.gated("migrate.gated"));

  it("drops the old indexes on start; its run in flight goes on from its log and completes once", async () => {
    gates.gateFor("migrate-1");
    const run = await workflow.start("migrate.gated", "m", { id: "migrate-1" });
    const stub = actorOfRun(run.id);
    await waitForLog(run.id, (events) => events.at(-1)?.type === "step_started");
    await runInDurableObject(stub, (_instance, state) => state.storage.sql.exec(INDEXES_MADE_BEFORE).toArray());
    expect(await indexesOf(stub)).toHaveLength(5);

    const evicting = evictDurableObject(stub);
    expect(await settled(evicting)).toBe("pending");
    gates.gateFor("migrate-1").open();
    await evicting;

    // The first call starts a fresh instance, which opens its store (and drops the indexes) in its constructor.
    expect(await workflow.get(run.id)).toMatchObject({ status: "completed", result: { data: "m", opened: true } });
    expect(await indexesOf(stub)).toEqual([]);
    const events = await actorLog(run.id);
    expect(shape(events)).toEqual(START_FINISH_LOG);
    expectWellFormed(events);
  });

  it("after the migration an appended event writes two rows, its own and its run's summary (six with the old indexes)", async () => {
    const stub = actorNamed("migrate-rows");
    const runId = "migrate-rows.run00000001";
    const created = (at: number): StoredEvent => ({
      runId,
      workflowId: "migrate-rows",
      seq: 1,
      type: "workflow_created",
      payload: { workflowName: "migrate.gated", writes: {} },
      at,
    });
    const started = (seq: number, at: number): StoredEvent => ({
      runId,
      workflowId: "migrate-rows",
      seq,
      type: "step_started",
      payload: { step: "start", attempt: seq - 1 },
      at,
    });
    const written = await runInDurableObject(stub, (_instance, state) => {
      const sql = durableObjectSql(state.storage);
      const before = createSqlEventStore(sql, { manyRuns: false });
      before.createRunIfNoActive(created(testClock()));
      sql.script(INDEXES_MADE_BEFORE);
      resetStorageMeter();
      before.append([started(2, testClock())]);
      const withOldIndexes = readStorageMeter().rowsWritten;
      const after = createSqlEventStore(sql, { manyRuns: false });
      resetStorageMeter();
      after.append([started(3, testClock())]);
      return { withOldIndexes, afterMigration: readStorageMeter().rowsWritten };
    });
    // Before: the event's row and its two index rows, the run's summary row and, since the UPDATE sets
    // `status` (SQLite rewrites an index entry for each column set), one row in each of the two old
    // indexes on status. After: the event's row and the summary's.
    expect(written).toEqual({ withOldIndexes: 3 + 1 + 2, afterMigration: 1 + 1 });
  });
});
