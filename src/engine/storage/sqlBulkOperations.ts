import type { BulkAction, BulkOperation, BulkOperationLog } from "../control/bulkOperation.ts";
import type { RunFilter } from "./runQuery.ts";
import { selectRunIds, type SyncSql } from "./syncSql.ts";

/**
 * Bulk operations beside the runs they act on (the node:sqlite file, the
 * run index actor): one row per operation, and one per run it has not acted
 * on yet, deleted as each batch is recorded. An operation's rows go once it
 * is done and a day old.
 */
export const BULK_OPERATIONS_SCHEMA = `
  CREATE TABLE IF NOT EXISTS _workflow_bulk_operations (
    id TEXT PRIMARY KEY,
    action TEXT NOT NULL,
    filter TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    matched INTEGER NOT NULL,
    affected INTEGER NOT NULL DEFAULT 0,
    done INTEGER NOT NULL DEFAULT 0
  );
  CREATE TABLE IF NOT EXISTS _workflow_bulk_runs (
    operation_id TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    run_id TEXT NOT NULL,
    PRIMARY KEY (operation_id, ordinal)
  ) WITHOUT ROWID;`;

/** How long a finished operation's row is kept (it answers nothing once its caller has its result). */
const KEEP_DONE_MS = 24 * 60 * 60 * 1000;
/** Rows per INSERT: three parameters each, under Durable Object SQL's 100. */
const ROWS_PER_INSERT = 33;

type OperationRow = {
  id: string;
  action: string;
  filter: string;
  created_at: number;
  matched: number;
  affected: number;
  done: number;
};

function toOperation(row: OperationRow): BulkOperation {
  return {
    id: row.id,
    action: JSON.parse(row.action) as BulkAction,
    filter: JSON.parse(row.filter) as RunFilter,
    createdAt: row.created_at,
    matched: row.matched,
    affected: row.affected,
    done: row.done === 1,
  };
}

/** The log over `sql`; `schema` false when the caller has created the tables (one script with its own). */
export function createSqlBulkOperationLog(
  sql: SyncSql,
  { schema = true }: { schema?: boolean } = {},
): BulkOperationLog {
  if (schema) sql.script(BULK_OPERATIONS_SCHEMA);
  const operation = (id: string) =>
    sql.all<OperationRow>("SELECT * FROM _workflow_bulk_operations WHERE id = ?", id)[0] ?? null;
  return {
    createBulkOperation(op, runIds) {
      sql.transaction(() => {
        sql.run("DELETE FROM _workflow_bulk_operations WHERE done = 1 AND created_at < ?", op.createdAt - KEEP_DONE_MS);
        sql.run(
          "INSERT INTO _workflow_bulk_operations (id, action, filter, created_at, matched, done) VALUES (?, ?, ?, ?, ?, ?)",
          op.id,
          JSON.stringify(op.action),
          JSON.stringify(op.filter),
          op.createdAt,
          op.matched,
          runIds.length === 0 ? 1 : 0,
        );
        for (let from = 0; from < runIds.length; from += ROWS_PER_INSERT) {
          const chunk = runIds.slice(from, from + ROWS_PER_INSERT);
          sql.run(
            `INSERT INTO _workflow_bulk_runs (operation_id, ordinal, run_id) VALUES ${chunk.map(() => "(?, ?, ?)").join(", ")}`,
            ...chunk.flatMap((runId, i) => [op.id, from + i, runId]),
          );
        }
      });
    },

    pendingBulkRuns(operationId, limit) {
      return selectRunIds(
        sql,
        "SELECT run_id FROM _workflow_bulk_runs WHERE operation_id = ? ORDER BY ordinal LIMIT ?",
        operationId,
        limit,
      );
    },

    settleBulkRuns(operationId, outcomes) {
      sql.transaction(() => {
        for (let from = 0; from < outcomes.length; from += ROWS_PER_INSERT) {
          const chunk = outcomes.slice(from, from + ROWS_PER_INSERT).map((o) => o.runId);
          sql.run(
            `DELETE FROM _workflow_bulk_runs WHERE operation_id = ? AND run_id IN (${chunk.map(() => "?").join(", ")})`,
            operationId,
            ...chunk,
          );
        }
        const [left] = sql.all<{ n: number }>(
          "SELECT count(*) AS n FROM (SELECT 1 FROM _workflow_bulk_runs WHERE operation_id = ? LIMIT 1)",
          operationId,
        );
        sql.run(
          "UPDATE _workflow_bulk_operations SET affected = affected + ?, done = ? WHERE id = ?",
          outcomes.filter((o) => o.affected).length,
          left?.n ? 0 : 1,
          operationId,
        );
      });
    },

    bulkOperation(operationId) {
      const row = operation(operationId);
      return row ? toOperation(row) : null;
    },

    unfinishedBulkOperations() {
      return sql
        .all<OperationRow>("SELECT * FROM _workflow_bulk_operations WHERE done = 0 ORDER BY created_at")
        .map(toOperation);
    },
  };
}
