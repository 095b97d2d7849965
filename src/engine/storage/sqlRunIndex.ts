import { summaryOf } from "../execution/appendRules.ts";
import type { StoredEvent } from "../execution/events.ts";
import { decodeListCursor, encodeListCursor, type RunFilter, type RunListPage, type RunListQuery } from "./runQuery.ts";
import {
  ACTIVE_STATUSES,
  LIVE_STATUSES,
  type LivePosition,
  RUN_STATUSES,
  type RunIndex,
  type RunReport,
  type RunSummary,
} from "./store.ts";
import { selectRunIds, type SqlValue, type SyncSql } from "./syncSql.ts";

/**
 * One summary row per run. The event store keeps it in the same transactions
 * as the log; the Durable Object backend's per-project index actor keeps the
 * same table for runs spread over many actors, from their reports.
 * `position` is a plain rowid alias numbering runs in the order they were
 * first recorded (it ties runs started in the same millisecond in list
 * order); tables made before keep AUTOINCREMENT, which numbers alike.
 *
 * For search, the stranded-runs check and retention: `step` (the
 * run's position: the step it is in or will claim next), `version`, `error`
 * (the failure reason), `rerun_of` / `rerun_from_step`, `retention_ms` (how
 * long it is kept once it ended) and `expires_at` (its end + that).
 */
export const RUN_TABLE_SCHEMA = `CREATE TABLE IF NOT EXISTS _workflow_runs (
    position INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL UNIQUE,
    workflow_id TEXT NOT NULL,
    name TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    last_seq INTEGER NOT NULL DEFAULT 0,
    step TEXT NOT NULL DEFAULT 'start',
    version TEXT,
    error TEXT,
    rerun_of TEXT,
    rerun_from_step TEXT,
    retention_ms INTEGER,
    expires_at INTEGER
  );`;

/**
 * A run actor's `_workflow_runs` (made fresh; an actor made before keeps the
 * table above, which reads and writes alike): keyed by run_id alone, so a run's
 * row is one b-tree entry, not a row plus run_id's unique index (one row
 * written fewer per run). `position` is given on insert (the largest + 1).
 */
export const RUN_ACTOR_TABLE_SCHEMA = `CREATE TABLE IF NOT EXISTS _workflow_runs (
    run_id TEXT NOT NULL PRIMARY KEY,
    position INTEGER NOT NULL,
    workflow_id TEXT NOT NULL,
    name TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    last_seq INTEGER NOT NULL DEFAULT 0,
    step TEXT NOT NULL DEFAULT 'start',
    version TEXT,
    error TEXT,
    rerun_of TEXT,
    rerun_from_step TEXT,
    retention_ms INTEGER,
    expires_at INTEGER
  ) WITHOUT ROWID;`;

/** Columns added since the table's first version, for tables made before (see {@link migrateRunTable}). */
const ADDED_COLUMNS: readonly [string, string][] = [
  ["step", "TEXT NOT NULL DEFAULT 'start'"],
  ["version", "TEXT"],
  ["error", "TEXT"],
  ["rerun_of", "TEXT"],
  ["rerun_from_step", "TEXT"],
  ["retention_ms", "INTEGER"],
  ["expires_at", "INTEGER"],
];

const LIVE = `status IN (${LIVE_STATUSES.map((s) => `'${s}'`).join(", ")})`;
const ACTIVE = `status IN (${ACTIVE_STATUSES.map((s) => `'${s}'`).join(", ")})`;
const ALL_STATUSES = `status IN (${RUN_STATUSES.map((s) => `'${s}'`).join(", ")})`;

/** `CREATE INDEX` statements by index name, and the script that drops those names (a migration). */
type IndexDefinitions = Readonly<Record<string, string>>;
const createScript = (indexes: IndexDefinitions) =>
  Object.entries(indexes)
    .map(([name, on]) => `\n  CREATE INDEX IF NOT EXISTS ${name} ON _workflow_runs ${on};`)
    .join("");
const dropScript = (indexes: IndexDefinitions) =>
  Object.keys(indexes)
    .map((name) => `\n  DROP INDEX IF EXISTS ${name};`)
    .join("");

/**
 * What finding runs among many needs. A list is newest first by start time,
 * so every search index ends with `created_at` (and the rowid, `position`,
 * after it): a filter on status, status and step, name, version or rerun_of
 * reads its page (and a `since`/`until` range) straight from one index. A
 * filter on none of those (the whole list, a step alone, a time range)
 * reads the newest of each status from `by_status` or `by_status_step` and
 * merges them ({@link newestFirst}): at most a page per status, where an index
 * of its own (`by_created`, `by_step`, retired) would cost a written row for
 * every run and every step change. `error` and `idPrefix` are checked on the
 * rows that index yields (idPrefix also has run_id's own unique index).
 * Finished runs by expiry (retention) have an index of their own.
 */
const RUN_LIST_INDEXES: IndexDefinitions = {
  _workflow_runs_by_status: "(status, created_at)",
  _workflow_runs_by_status_step: "(status, step, created_at)",
  _workflow_runs_by_name: "(name, created_at)",
  _workflow_runs_by_version: "(version, created_at) WHERE version IS NOT NULL",
  _workflow_runs_by_rerun: "(rerun_of, created_at) WHERE rerun_of IS NOT NULL",
  _workflow_runs_expiry: "(expires_at) WHERE expires_at IS NOT NULL",
};

/**
 * What creating runs among many needs: the live run of a workflow id (one
 * active run per id) and (idempotency keys) the newest run of a workflow id.
 * Only a database that creates its runs asks (node:sqlite); the Durable
 * Object backend's run index is told of runs its actors created, and each
 * run actor scans its own few rows. The live runs' index is `_live_ids`
 * since `waiting` became a live status: a partial index keeps the condition
 * it was made with.
 */
const RUN_ID_INDEXES: IndexDefinitions = {
  _workflow_runs_live_ids: `(workflow_id) WHERE ${LIVE}`,
  _workflow_runs_workflow_id: "(workflow_id, position)",
};

/** Indexes of earlier versions, dropped wherever the table is opened. */
const RETIRED_INDEXES = `
  DROP INDEX IF EXISTS _workflow_runs_by_created;
  DROP INDEX IF EXISTS _workflow_runs_by_step;
  DROP INDEX IF EXISTS _workflow_runs_active;
  DROP INDEX IF EXISTS _workflow_runs_status;
  DROP INDEX IF EXISTS _workflow_runs_live;`;

/** The run index of the Durable Object backend: the search indexes (an index made before loses the two others). */
export const RUN_LIST_INDEXES_SCHEMA = RETIRED_INDEXES + createScript(RUN_LIST_INDEXES) + dropScript(RUN_ID_INDEXES);

/** One database that creates and lists a project's runs: every index. */
export const RUN_ALL_INDEXES_SCHEMA = RETIRED_INDEXES + createScript(RUN_LIST_INDEXES) + createScript(RUN_ID_INDEXES);

/** A run actor's few rows: no index beyond run_id's own (an actor made before loses every other). */
export const RUN_NO_INDEXES_SCHEMA = RETIRED_INDEXES + dropScript(RUN_LIST_INDEXES) + dropScript(RUN_ID_INDEXES);

export type RunRow = {
  position: number;
  run_id: string;
  workflow_id: string;
  name: string;
  status: string;
  created_at: number;
  updated_at: number;
  last_seq: number;
  step: string;
  version: string | null;
  error: string | null;
  rerun_of: string | null;
  rerun_from_step: string | null;
  retention_ms: number | null;
  expires_at: number | null;
};

export function toSummary(row: RunRow): RunSummary {
  return {
    id: row.run_id,
    workflowId: row.workflow_id,
    name: row.name,
    status: row.status as RunSummary["status"],
    step: row.step,
    ...(row.version === null ? {} : { version: row.version }),
    ...(row.error === null ? {} : { error: row.error }),
    ...(row.rerun_of === null
      ? {}
      : {
          rerunOf:
            row.rerun_from_step === null
              ? { runId: row.rerun_of }
              : { runId: row.rerun_of, fromStep: row.rerun_from_step },
        }),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ...(row.expires_at === null ? {} : { expiresAt: row.expires_at }),
  };
}

/**
 * Brings a `_workflow_runs` made by an earlier version up to this one: adds
 * the missing columns and, when the same database holds the runs' logs
 * (`eventsOf`), fills in the position and failure of its live runs (a
 * finished run keeps `start`). One read of the table's columns when nothing
 * is missing; nothing at all for a database without the table.
 */
export function migrateRunTable(sql: SyncSql, eventsOf?: (runId: string) => StoredEvent[]): void {
  const columns = new Set(sql.all<{ name: string }>("PRAGMA table_info(_workflow_runs)").map((c) => c.name));
  if (columns.size === 0) return;
  const missing = ADDED_COLUMNS.filter(([name]) => !columns.has(name));
  if (missing.length === 0) return;
  sql.transaction(() => {
    for (const [name, type] of missing) sql.run(`ALTER TABLE _workflow_runs ADD COLUMN ${name} ${type}`);
    if (!eventsOf) return;
    for (const { run_id } of sql.all<{ run_id: string }>(`SELECT run_id FROM _workflow_runs WHERE ${LIVE}`)) {
      const { step } = summaryOf(eventsOf(run_id));
      sql.run("UPDATE _workflow_runs SET step = ? WHERE run_id = ?", step, run_id);
    }
  });
}

/** The upper bound of the strings that begin with `prefix` (exclusive), for a range on run_id's index. */
function prefixEnd(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}

/** Whether a filter names a column with an index of its own; else a query goes through every status's. */
function hasOwnIndex(filter: RunFilter): boolean {
  return (
    filter.status !== undefined ||
    filter.name !== undefined ||
    filter.version !== undefined ||
    filter.rerunOf !== undefined ||
    filter.idPrefix !== undefined
  );
}

/**
 * The runs matching `where`, newest first, at most `limit`. With a filter
 * that names no indexed column but step and time, one query per status, each
 * reading its newest from `by_status` or `by_status_step`, merged here
 * (Durable Object SQL refuses a compound SELECT of that many terms), instead
 * of sorting every run.
 */
function newestFirst<Row extends Pick<RunRow, "created_at" | "position">>(
  sql: SyncSql,
  filter: RunFilter,
  columns: string,
  { where, params }: { where: string[]; params: SqlValue[] },
  limit: number,
): Row[] {
  const select = (clauses: string[], values: SqlValue[]) =>
    sql.all<Row>(
      `SELECT ${columns} FROM _workflow_runs ${clauses.length ? `WHERE ${clauses.join(" AND ")}` : ""} ORDER BY created_at DESC, position DESC LIMIT ?`,
      ...values,
      limit,
    );
  if (hasOwnIndex(filter)) return select(where, params);
  return RUN_STATUSES.flatMap((status) => select(["status = ?", ...where], [status, ...params]))
    .sort((a, b) => b.created_at - a.created_at || b.position - a.position)
    .slice(0, limit);
}

/** The WHERE clause (and its parameters) of a filter. */
function whereOf(filter: RunFilter): { where: string[]; params: SqlValue[] } {
  const where: string[] = [];
  const params: SqlValue[] = [];
  const add = (clause: string, ...values: SqlValue[]) => {
    where.push(clause);
    params.push(...values);
  };
  if (filter.name !== undefined) add("name = ?", filter.name);
  if (filter.status !== undefined) add("status = ?", filter.status);
  if (filter.step !== undefined) add("step = ?", filter.step);
  if (filter.version !== undefined) add("version = ?", filter.version);
  if (filter.rerunOf !== undefined) add("rerun_of = ?", filter.rerunOf);
  if (filter.since !== undefined) add("created_at >= ?", filter.since);
  if (filter.until !== undefined) add("created_at < ?", filter.until);
  if (filter.idPrefix !== undefined) add("run_id >= ? AND run_id < ?", filter.idPrefix, prefixEnd(filter.idPrefix));
  if (filter.error !== undefined) add("instr(error, ?) > 0", filter.error);
  return { where, params };
}

export interface SqlRunIndex extends RunIndex {
  /**
   * Inserts or updates runs' summaries as their actors report them; a run
   * keeps its list position. A report changes a row only while the run is
   * live there and it is not older than what the row holds (its `lastSeq`),
   * so reports of one run may arrive in any order.
   */
  record(reports: readonly RunReport[]): void;
  /** Deletes runs' summaries (retention). */
  forget(runIds: readonly string[]): void;
  /** A run's summary with the seq of its last event: what its actor reports to the project's index. */
  getReport(runId: string): RunReport | null;
  /** The newest run of `workflowId`, ended or not. */
  latestRunOf(workflowId: string): RunSummary | null;
}

/** Durable Object SQL binds at most 100 parameters per statement. */
const MAX_BOUND = 100;

/** The indexed columns a report may change on a run's row. */
const REPORTED_COLUMNS = ["status", "step", "error", "expires_at"] as const;
type ReportedColumn = (typeof REPORTED_COLUMNS)[number];

/** The run index over `sql`; `schema` false when the caller has created the tables (one script with its own). */
export function createSqlRunIndex(sql: SyncSql, { schema = true }: { schema?: boolean } = {}): SqlRunIndex {
  if (schema) {
    migrateRunTable(sql);
    sql.script(RUN_TABLE_SCHEMA + RUN_LIST_INDEXES_SCHEMA);
  }
  return {
    record(reports) {
      for (const r of reports) {
        const reported: Record<ReportedColumn, SqlValue> = {
          status: r.status,
          step: r.step,
          error: r.error ?? null,
          expires_at: r.expiresAt ?? null,
        };
        const [row] = sql.all<Pick<RunRow, ReportedColumn | "last_seq">>(
          "SELECT status, step, error, expires_at, last_seq FROM _workflow_runs WHERE run_id = ?",
          r.id,
        );
        if (!row) {
          sql.run(
            `INSERT INTO _workflow_runs (run_id, workflow_id, name, status, created_at, updated_at, last_seq, step, version, error, rerun_of, rerun_from_step, expires_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
            r.id,
            r.workflowId,
            r.name,
            r.status,
            r.createdAt,
            r.updatedAt,
            r.lastSeq,
            r.step,
            r.version ?? null,
            r.error ?? null,
            r.rerunOf?.runId ?? null,
            r.rerunOf?.fromStep ?? null,
            r.expiresAt ?? null,
          );
          continue;
        }
        if (!(LIVE_STATUSES as readonly string[]).includes(row.status) || r.lastSeq < row.last_seq) continue;
        // SQLite rewrites the index entries of every column an UPDATE sets, changed or not: set only what changed.
        const changed = REPORTED_COLUMNS.filter((column) => row[column] !== reported[column]);
        sql.run(
          `UPDATE _workflow_runs SET updated_at = ?, last_seq = ?${changed.map((column) => `, ${column} = ?`).join("")} WHERE run_id = ?`,
          r.updatedAt,
          r.lastSeq,
          ...changed.map((column) => reported[column]),
          r.id,
        );
      }
    },

    forget(runIds) {
      for (let i = 0; i < runIds.length; i += MAX_BOUND) {
        const chunk = runIds.slice(i, i + MAX_BOUND);
        sql.run(`DELETE FROM _workflow_runs WHERE run_id IN (${chunk.map(() => "?").join(", ")})`, ...chunk);
      }
    },

    getRun(runId) {
      const [row] = sql.all<RunRow>("SELECT * FROM _workflow_runs WHERE run_id = ?", runId);
      return row ? toSummary(row) : null;
    },

    getReport(runId) {
      const [row] = sql.all<RunRow>("SELECT * FROM _workflow_runs WHERE run_id = ?", runId);
      return row ? { ...toSummary(row), step: row.step, lastSeq: row.last_seq } : null;
    },

    listRuns(query: RunListQuery): RunListPage {
      const { where, params } = whereOf(query);
      if (query.cursor !== undefined) {
        const after = decodeListCursor(query.cursor);
        // The first bound narrows the index range; the second breaks ties within one millisecond.
        where.push("created_at <= ? AND (created_at < ? OR position < ?)");
        params.push(after.createdAt, after.createdAt, after.position);
      }
      const rows = newestFirst<RunRow>(sql, query, "*", { where, params }, query.limit + 1);
      const runs = rows.slice(0, query.limit);
      const last = runs[runs.length - 1];
      return {
        runs: runs.map(toSummary),
        ...(rows.length > query.limit && last
          ? { cursor: encodeListCursor({ createdAt: last.created_at, position: last.position }) }
          : {}),
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
      return selectRunIds(sql, `SELECT run_id FROM _workflow_runs WHERE ${ACTIVE} ORDER BY created_at`);
    },

    matchRunIds(filter, max) {
      const { where, params } = whereOf(filter);
      const runIds = newestFirst<Pick<RunRow, "run_id" | "created_at" | "position">>(
        sql,
        filter,
        "run_id, created_at, position",
        { where, params },
        max,
      ).map((row) => row.run_id);
      // Without an index of its own, counted through every status's (by_status, by_status_step), as listed.
      const counted = hasOwnIndex(filter) ? where : [ALL_STATUSES, ...where];
      const matched =
        runIds.length < max
          ? runIds.length
          : (sql.all<{ n: number }>(
              `SELECT count(*) AS n FROM _workflow_runs ${counted.length ? `WHERE ${counted.join(" AND ")}` : ""}`,
              ...params,
            )[0]?.n ?? 0);
      return { runIds, matched };
    },

    livePositions(): LivePosition[] {
      return sql.all<{ name: string; step: string; runs: number }>(
        `SELECT name, step, count(*) AS runs FROM _workflow_runs WHERE ${LIVE} GROUP BY name, step`,
      );
    },

    liveRunsAt(name, step, limit) {
      return sql
        .all<RunRow>(
          `SELECT * FROM _workflow_runs WHERE ${LIVE} AND name = ? AND step = ? ORDER BY created_at DESC, position DESC LIMIT ?`,
          name,
          step,
          limit,
        )
        .map(toSummary);
    },

    expiredRunIds(now, limit) {
      return selectRunIds(
        sql,
        "SELECT run_id FROM _workflow_runs WHERE expires_at IS NOT NULL AND expires_at <= ? ORDER BY expires_at LIMIT ?",
        now,
        limit,
      );
    },
  };
}
