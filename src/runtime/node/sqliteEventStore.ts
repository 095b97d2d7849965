import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { DatabaseSync, type SQLInputValue } from "node:sqlite";
import { PlatformError } from "../../shared/errors.ts";
import { checkRunBatch, groupBatch, statusAfter } from "../workflow/appendRules.ts";
import type { StoredEvent, WorkflowEventType } from "../workflow/events.ts";
import { decodeListCursor, type RunListPage, type RunListQuery, type RunStatus, type RunSummary, type WorkflowEventStore, type WorkflowRunIndex } from "../workflow/store.ts";

export interface SqliteWorkflowStore extends WorkflowEventStore, WorkflowRunIndex {
  readonly db: DatabaseSync;
  close(): void;
}

/**
 * `_workflow_events` is the spec's table. `_workflow_runs` is a summary kept
 * in the same transactions, for `workflow.list`, the recovery sweep and the
 * one-active-run rule, which its partial unique index also enforces across
 * processes sharing the file.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS _workflow_events (
  run_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  workflow_id TEXT NOT NULL,
  type TEXT NOT NULL,
  payload TEXT NOT NULL,
  at INTEGER NOT NULL,
  PRIMARY KEY (run_id, seq)
);
CREATE INDEX IF NOT EXISTS _workflow_events_run_seq ON _workflow_events (run_id, seq DESC);
CREATE INDEX IF NOT EXISTS _workflow_events_workflow_id ON _workflow_events (workflow_id);
CREATE TABLE IF NOT EXISTS _workflow_runs (
  position INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id TEXT NOT NULL UNIQUE,
  workflow_id TEXT NOT NULL,
  name TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed')),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS _workflow_runs_one_active ON _workflow_runs (workflow_id) WHERE status = 'running';
CREATE INDEX IF NOT EXISTS _workflow_runs_name ON _workflow_runs (name, position);
CREATE INDEX IF NOT EXISTS _workflow_runs_status ON _workflow_runs (status, position);
`;

interface EventRow {
  run_id: string;
  seq: number;
  workflow_id: string;
  type: WorkflowEventType;
  payload: string;
  at: number;
}

interface RunRow {
  position: number;
  run_id: string;
  workflow_id: string;
  name: string;
  status: RunStatus;
  created_at: number;
  updated_at: number;
}

/** Opens (creating if needed) a workflow store in a SQLite file, or ":memory:". */
export function openSqliteWorkflowStore(path: string): SqliteWorkflowStore {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new DatabaseSync(path);
  // WAL + a busy timeout so a second process (e.g. the CLI's `workflow list`) can read while dev runs.
  db.exec("PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 5000;");
  db.exec(SCHEMA);

  const statements = {
    events: db.prepare("SELECT run_id, seq, workflow_id, type, payload, at FROM _workflow_events WHERE run_id = ? AND seq > ? ORDER BY seq"),
    lastEvent: db.prepare("SELECT run_id, seq, workflow_id, type, payload, at FROM _workflow_events WHERE run_id = ? ORDER BY seq DESC LIMIT 1"),
    insertEvent: db.prepare("INSERT INTO _workflow_events (run_id, seq, workflow_id, type, payload, at) VALUES (?, ?, ?, ?, ?, ?)"),
    run: db.prepare("SELECT position, run_id, workflow_id, name, status, created_at, updated_at FROM _workflow_runs WHERE run_id = ?"),
    activeRun: db.prepare("SELECT run_id FROM _workflow_runs WHERE workflow_id = ? AND status = 'running'"),
    insertRun: db.prepare("INSERT INTO _workflow_runs (run_id, workflow_id, name, status, created_at, updated_at) VALUES (?, ?, ?, 'running', ?, ?)"),
    updateRun: db.prepare("UPDATE _workflow_runs SET status = ?, updated_at = ? WHERE run_id = ?"),
    activeRunIds: db.prepare("SELECT run_id FROM _workflow_runs WHERE status = 'running' ORDER BY position"),
  };

  /** BEGIN IMMEDIATE takes the write lock up front, so the checks inside see what the write will follow. */
  function transaction<T>(work: () => T): T {
    db.exec("BEGIN IMMEDIATE");
    try {
      const result = work();
      db.exec("COMMIT");
      return result;
    } catch (error) {
      db.exec("ROLLBACK");
      throw asSeqConflict(error) ?? error;
    }
  }

  const insert = (event: StoredEvent) =>
    statements.insertEvent.run(event.runId, event.seq, event.workflowId, event.type, JSON.stringify(event.payload), event.at);

  return {
    db,

    lastEvent(runId) {
      const row = statements.lastEvent.get(runId) as EventRow | undefined;
      return row ? toEvent(row) : null;
    },

    events(runId, afterSeq = 0) {
      return (statements.events.all(runId, afterSeq) as unknown as EventRow[]).map(toEvent);
    },

    append(events) {
      const byRun = groupBatch(events);
      transaction(() => {
        for (const [runId, batch] of byRun) {
          const run = statements.run.get(runId) as RunRow | undefined;
          const last = statements.lastEvent.get(runId) as EventRow | undefined;
          const tail = run && last ? { workflowId: run.workflow_id, lastSeq: last.seq, terminal: run.status !== "running" } : null;
          checkRunBatch(runId, tail, batch);
          for (const event of batch) insert(event);
          const final = batch[batch.length - 1] as StoredEvent;
          statements.updateRun.run(statusAfter(final), final.at, runId);
        }
      });
    },

    createRunIfNoActive(created) {
      if (created.type !== "workflow_created" || created.seq !== 1) {
        throw new PlatformError("internal", "createRunIfNoActive takes the run's workflow_created event with seq 1");
      }
      return transaction(() => {
        const active = statements.activeRun.get(created.workflowId) as { run_id: string } | undefined;
        if (active) return { created: false as const, activeRunId: active.run_id };
        if (statements.run.get(created.runId)) throw new PlatformError("seq_conflict", `Run "${created.runId}" already exists`, { runId: created.runId, seq: 1 });
        statements.insertRun.run(created.runId, created.workflowId, created.payload.workflowName, created.at, created.at);
        insert(created);
        return { created: true as const };
      });
    },

    getRun(runId) {
      const row = statements.run.get(runId) as RunRow | undefined;
      return row ? toSummary(row) : null;
    },

    listRuns(query: RunListQuery): RunListPage {
      const where: string[] = [];
      const params: SQLInputValue[] = [];
      if (query.cursor !== undefined) {
        where.push("position < ?");
        params.push(decodeListCursor(query.cursor));
      }
      if (query.name !== undefined) {
        where.push("name = ?");
        params.push(query.name);
      }
      if (query.status !== undefined) {
        where.push("status = ?");
        params.push(query.status);
      }
      const sql =
        "SELECT position, run_id, workflow_id, name, status, created_at, updated_at FROM _workflow_runs" +
        (where.length ? ` WHERE ${where.join(" AND ")}` : "") +
        " ORDER BY position DESC LIMIT ?";
      // One extra row tells whether another page exists.
      const rows = db.prepare(sql).all(...params, query.limit + 1) as unknown as RunRow[];
      const page = rows.slice(0, query.limit);
      const last = page[page.length - 1];
      return { runs: page.map(toSummary), ...(rows.length > query.limit && last ? { cursor: String(last.position) } : {}) };
    },

    activeRunIds() {
      return (statements.activeRunIds.all() as { run_id: string }[]).map((row) => row.run_id);
    },

    close() {
      if (db.isOpen) db.close();
    },
  };
}

function toEvent(row: EventRow): StoredEvent {
  return { runId: row.run_id, workflowId: row.workflow_id, seq: row.seq, type: row.type, payload: JSON.parse(row.payload), at: row.at } as StoredEvent;
}

function toSummary(row: RunRow): RunSummary {
  return { id: row.run_id, workflowId: row.workflow_id, name: row.name, status: row.status, createdAt: row.created_at, updatedAt: row.updated_at };
}

/** A primary-key violation on the event log is the spec's seq race, whoever detected it first. */
function asSeqConflict(error: unknown): PlatformError | null {
  if (error instanceof PlatformError || !(error instanceof Error)) return null;
  if (/UNIQUE constraint failed: _workflow_events\.|UNIQUE constraint failed: _workflow_runs\.run_id/.test(error.message)) {
    return new PlatformError("seq_conflict", "Another executor wrote this event first", { cause: error.message });
  }
  return null;
}
