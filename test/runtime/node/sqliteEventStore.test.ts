import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { StoredEvent } from "#src/engine/execution/events.ts";
import { openSqliteWorkflowStore } from "#src/runtime/node/sqliteEventStore.ts";
import { describeEventStoreConformance } from "#test/conformance/eventStoreConformance.ts";

const dir = mkdtempSync(join(tmpdir(), "platform-wf-store-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

describeEventStoreConformance("node:sqlite (:memory:)", () => {
  const store = openSqliteWorkflowStore(":memory:");
  return { store, close: () => store.close() };
});

describeEventStoreConformance("node:sqlite (file)", () => {
  const store = openSqliteWorkflowStore(join(dir, `nested/dir/store-${++files}.sqlite`));
  return { store, close: () => store.close() };
});

describe("node:sqlite store specifics", () => {
  it("creates the event log's table and indexes, and reopening an existing file is idempotent", () => {
    const path = join(dir, "schema.sqlite");
    const first = openSqliteWorkflowStore(path);
    first.createRunIfNoActive({
      runId: "r1",
      workflowId: "r1",
      seq: 1,
      type: "workflow_created",
      payload: { workflowName: "w", writes: { data: 1 } },
      at: 5,
    });
    first.close();
    const again = openSqliteWorkflowStore(path);
    expect(again.events("r1")).toHaveLength(1);
    const columns = again.db
      .prepare("PRAGMA table_info(_workflow_events)")
      .all()
      .map((c) => [c.name, c.type, c.notnull, c.pk]);
    expect(columns).toEqual([
      ["run_id", "TEXT", 1, 1],
      ["seq", "INTEGER", 1, 2],
      ["workflow_id", "TEXT", 1, 0],
      ["type", "TEXT", 1, 0],
      ["payload", "TEXT", 1, 0],
      ["at", "INTEGER", 1, 0],
    ]);
    const indexes = again.db
      .prepare("PRAGMA index_list(_workflow_events)")
      .all()
      .map((i) => i.name);
    expect(indexes).toEqual(expect.arrayContaining(["_workflow_events_run_seq_desc", "_workflow_events_workflow_id"]));
    const runSeq = again.db
      .prepare("PRAGMA index_xinfo(_workflow_events_run_seq_desc)")
      .all()
      .filter((c) => c.key === 1)
      .map((c) => [c.name, c.desc]);
    expect(runSeq).toEqual([
      ["run_id", 0],
      ["seq", 1],
    ]);
    again.close();
  });

  it("opens a file in WAL mode with synchronous = NORMAL, at every open (a process crash loses no commit)", () => {
    const path = join(dir, "durability.sqlite");
    for (const store of [openSqliteWorkflowStore(path), openSqliteWorkflowStore(path)]) {
      expect(store.db.prepare("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" });
      expect(store.db.prepare("PRAGMA synchronous").get()).toEqual({ synchronous: 1 }); // 1 = NORMAL (2 = FULL)
      expect(store.db.prepare("PRAGMA busy_timeout").get()).toEqual({ timeout: 5000 });
      store.close();
    }
  });

  it("sees another connection's writes: one active run per workflow id and a taken seq hold across connections", () => {
    const path = join(dir, "two-connections.sqlite");
    const a = openSqliteWorkflowStore(path);
    const b = openSqliteWorkflowStore(path);
    a.createRunIfNoActive({
      runId: "r1",
      workflowId: "order-1",
      seq: 1,
      type: "workflow_created",
      payload: { workflowName: "w", writes: { data: null } },
      at: 1,
    });
    // One active run per workflow id holds across connections.
    expect(
      b.createRunIfNoActive({
        runId: "r2",
        workflowId: "order-1",
        seq: 1,
        type: "workflow_created",
        payload: { workflowName: "w", writes: { data: null } },
        at: 2,
      }),
    ).toEqual({
      created: false,
      activeRunId: "r1",
    });
    const started: StoredEvent = {
      runId: "r1",
      workflowId: "order-1",
      seq: 2,
      type: "step_started",
      payload: { step: "start", attempt: 1 },
      at: 3,
    };
    a.append([started]);
    expect(b.append([started])).toEqual({ appended: false, seqTaken: { runId: "r1", seq: 2 } });
    expect(b.events("r1")).toHaveLength(2);
    a.close();
    b.close();
  });
});
