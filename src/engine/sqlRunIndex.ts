import { decodeListCursor, type RunListPage, type RunListQuery, type RunSummary, type RunIndex } from "./store.ts";
import type { SyncSql, SqlValue } from "./syncSql.ts";

/**
 * One summary row per run, numbered in the order runs were first recorded
 * (the list cursor). The event store keeps it in the same transactions as the
 * log; the Durable Object backend's per-project index actor keeps the same
 * table for runs spread over many actors. `position` is a plain rowid alias:
 * rows are never deleted, so new rows always number after the last, without
 * AUTOINCREMENT's sqlite_sequence table and its write at every insert
 * (tables made before keep AUTOINCREMENT, which numbers alike).
 */
export const RUN_TABLE_SCHEMA = `CREATE TABLE IF NOT EXISTS _workflow_runs (
    position INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL UNIQUE,
    workflow_id TEXT NOT NULL,
    name TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    last_seq INTEGER NOT NULL DEFAULT 0
  );`;

/**
 * What finding runs among many needs: the active run of a workflow id, runs by status in list order,
 * and (beyond the spec, idempotency keys) the newest run of a workflow id.
 */
export const RUN_LIST_INDEXES_SCHEMA = `
  CREATE INDEX IF NOT EXISTS _workflow_runs_active ON _workflow_runs (workflow_id) WHERE status = 'running';
  CREATE INDEX IF NOT EXISTS _workflow_runs_status ON _workflow_runs (status, position);
  CREATE INDEX IF NOT EXISTS _workflow_runs_workflow_id ON _workflow_runs (workflow_id, position);`;

export type RunRow = {
  position: number;
  run_id: string;
  workflow_id: string;
  name: string;
  status: string;
  created_at: number;
  updated_at: number;
  last_seq: number;
};

function toSummary(row: RunRow): RunSummary {
  return {
    id: row.run_id,
    workflowId: row.workflow_id,
    name: row.name,
    status: row.status as RunSummary["status"],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export interface SqlRunIndex extends RunIndex {
  /**
   * Inserts or updates a run's summary; a run keeps its list position. A
   * terminal run stays as recorded (a run never leaves a terminal state), so
   * reports of one run may arrive in any order (a queued run's report that
   * arrives after its running one sets it back to queued until the next).
   */
  record(summary: RunSummary): void;
  /** The newest run of `workflowId`, ended or not. */
  latestRunOf(workflowId: string): RunSummary | null;
}

/** The run index over `sql`; `schema` false when the caller has created the tables (one script with its own). */
export function createSqlRunIndex(sql: SyncSql, { schema = true }: { schema?: boolean } = {}): SqlRunIndex {
  if (schema) sql.script(RUN_TABLE_SCHEMA + RUN_LIST_INDEXES_SCHEMA);
  return {
    record(summary) {
      sql.run(
        `INSERT INTO _workflow_runs (run_id, workflow_id, name, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (run_id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at WHERE _workflow_runs.status IN ('running', 'queued')`,
        summary.id,
        summary.workflowId,
        summary.name,
        summary.status,
        summary.createdAt,
        summary.updatedAt,
      );
    },

    getRun(runId) {
      const [row] = sql.all<RunRow>("SELECT * FROM _workflow_runs WHERE run_id = ?", runId);
      return row ? toSummary(row) : null;
    },

    listRuns(query: RunListQuery): RunListPage {
      const before = query.cursor === undefined ? Number.MAX_SAFE_INTEGER : decodeListCursor(query.cursor);
      const where = ["position < ?"];
      const params: SqlValue[] = [before];
      if (query.name !== undefined) {
        where.push("name = ?");
        params.push(query.name);
      }
      if (query.status !== undefined) {
        where.push("status = ?");
        params.push(query.status);
      }
      const rows = sql.all<RunRow>(
        `SELECT * FROM _workflow_runs WHERE ${where.join(" AND ")} ORDER BY position DESC LIMIT ?`,
        ...params,
        query.limit + 1,
      );
      const page = rows.slice(0, query.limit);
      const last = page[page.length - 1];
      return {
        runs: page.map(toSummary),
        ...(rows.length > query.limit && last ? { cursor: String(last.position) } : {}),
      };
    },

    latestRunOf(workflowId) {
      const [row] = sql.all<RunRow>(
        "SELECT * FROM _workflow_runs WHERE workflow_id = ? ORDER BY position DESC LIMIT 1",
        workflowId,
      );
      return row ? toSummary(row) : null;
    },

    activeRunIds() {
      return sql
        .all<{ run_id: string }>("SELECT run_id FROM _workflow_runs WHERE status = 'running' ORDER BY position")
        .map((r) => r.run_id);
    },
  };
}
