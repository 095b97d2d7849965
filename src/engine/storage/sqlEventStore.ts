import { PlatformError } from "../../core/errors.ts";
import { checkRunBatch, groupBatch, type RunBefore, summaryChange } from "../execution/appendRules.ts";
import { CONTROL_EVENT_TYPES, isControlEvent, type StoredEvent } from "../execution/events.ts";
import { type EventRow, packEventRows, unpackEventRow } from "./eventRows.ts";
import { encodePayload } from "../api/json.ts";
import {
  createSqlRunIndex,
  migrateRunTable,
  RUN_ALL_INDEXES_SCHEMA,
  RUN_ACTOR_TABLE_SCHEMA,
  RUN_NO_INDEXES_SCHEMA,
  RUN_TABLE_SCHEMA,
  type RunRow,
  type SqlRunIndex,
} from "./sqlRunIndex.ts";
import {
  DEFAULT_RETENTION_MS,
  LIVE_STATUSES,
  type AppendResult,
  type RunIndex,
  type RunStatus,
  type SeqTaken,
  type WorkflowEventStore,
} from "./store.ts";
import type { SqlValue, SyncSql } from "./syncSql.ts";

export type { SyncSql } from "./syncSql.ts";

/** The SQL event store: the log, its runs' summaries, and (for the actor's reports) a summary with its last seq. */
export type SqlEventStore = WorkflowEventStore & RunIndex & Pick<SqlRunIndex, "getReport">;

/**
 * The event log's table (run summaries live in `_workflow_runs`, see
 * sqlRunIndex.ts). WITHOUT ROWID: the primary key is the table, so a log
 * is one b-tree, not a table plus the key's index (tables made before keep
 * their rowid, which reads and writes alike). Every query of the log names
 * one run and walks its seqs, forwards or backwards, on that key.
 */
export const WORKFLOW_EVENTS_SCHEMA = `CREATE TABLE IF NOT EXISTS _workflow_events (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    workflow_id TEXT NOT NULL,
    type TEXT NOT NULL,
    payload TEXT NOT NULL,
    at INTEGER NOT NULL,
    PRIMARY KEY (run_id, seq)
  ) WITHOUT ROWID;`;

/**
 * The log's two secondary indexes as the spec lays them out, kept where one
 * database holds a project's runs (node:sqlite). No query reads them: the
 * primary key already walks a run's seqs both ways.
 */
const EVENT_INDEXES_SCHEMA = `
  CREATE INDEX IF NOT EXISTS _workflow_events_run_seq_desc ON _workflow_events (run_id, seq DESC);
  CREATE INDEX IF NOT EXISTS _workflow_events_workflow_id ON _workflow_events (workflow_id);`;

/**
 * A run actor's log goes without them: each index is a row written per
 * event on the bill. Actors made before have them; dropping them on start
 * changes no row of the log.
 */
const DROP_EVENT_INDEXES = `
  DROP INDEX IF EXISTS _workflow_events_run_seq_desc;
  DROP INDEX IF EXISTS _workflow_events_workflow_id;`;

/** Who waits for a run to end (`waitForRun`), for the run's end to tell them. */
const RUN_WATCHERS_SCHEMA = `CREATE TABLE IF NOT EXISTS _workflow_run_watchers (
    run_id TEXT NOT NULL,
    watcher_run_id TEXT NOT NULL,
    PRIMARY KEY (run_id, watcher_run_id)
  ) WITHOUT ROWID;`;

export interface SqlEventStoreOptions {
  /**
   * Whether the runs table gets the indexes for finding runs among many
   * (default true: one database holds a project's runs). A WorkflowRun actor
   * holds the runs of one workflow id and scans its few rows instead, so a
   * fresh actor creates two b-trees fewer, its runs table is keyed by run_id
   * alone (RUN_ACTOR_TABLE_SCHEMA), and its log has no secondary index (an
   * actor made before loses its two on start).
   */
  manyRuns?: boolean;
  /**
   * Whether the events of one append share a row (eventRows.ts; default
   * false: one row per event, as the spec lays the log out). A run actor
   * packs them: a stretch of steps is one row written, not one per event.
   * Either store reads both kinds of row.
   */
  packRows?: boolean;
}

const CONTROL_TYPES = CONTROL_EVENT_TYPES.map((type) => `'${type}'`).join(", ");

const LIVE = `status IN (${LIVE_STATUSES.map((s) => `'${s}'`).join(", ")})`;

/**
 * What a batch changes in its run's row, as the UPDATE's parameters: the
 * status (ended, paused, resumed), the position, the failure reason, and the
 * expiry (its end + the run's retention); NULL keeps what the row holds.
 */
function rowChange(batch: StoredEvent[], before: RunBefore): SqlValue[] {
  const { status, step, error, endedAt } = summaryChange(batch, before);
  const last = batch[batch.length - 1] as StoredEvent;
  return [status ?? null, last.at, last.seq, step ?? null, error ?? null, endedAt ?? null];
}

const ROW_CHANGE = `status = COALESCE(?, status), updated_at = ?, last_seq = ?, step = COALESCE(?, step), error = COALESCE(?, error),
  expires_at = COALESCE(? + COALESCE(retention_ms, ${DEFAULT_RETENTION_MS}), expires_at)`;

/** Durable Object SQL binds at most 100 parameters per statement; an event takes 6. */
const ROWS_PER_INSERT = 16;
const INSERT_EVENTS = "INSERT INTO _workflow_events (run_id, seq, workflow_id, type, payload, at) VALUES ";
const insertStatements: string[] = [];

/** The INSERT of `rows` events, its text made once per length (both runtimes cache statements by text). */
function insertStatement(rows: number): string {
  insertStatements[rows] ??= INSERT_EVENTS + Array.from({ length: rows }, () => "(?, ?, ?, ?, ?, ?)").join(", ");
  return insertStatements[rows];
}

/** One row per event: the spec's layout. */
function eventRowsOf(events: readonly StoredEvent[]): EventRow[] {
  return events.map((event) => ({
    run_id: event.runId,
    seq: event.seq,
    workflow_id: event.workflowId,
    type: event.type,
    payload: encodePayload(event.payload, `${event.type} payload`),
    at: event.at,
  }));
}

/** Thrown inside an append's transaction to undo the runs it wrote before one whose seq was taken. */
class SeqTakenRollback {
  readonly seqTaken: SeqTaken;
  constructor(seqTaken: SeqTaken) {
    this.seqTaken = seqTaken;
  }
}

/** True when `batch` passes every append rule, given a tail it continues (same workflow id, the seq before its first, not terminal). */
function wellFormed(runId: string, batch: StoredEvent[]): boolean {
  const first = batch[0];
  if (!first) return false;
  try {
    checkRunBatch(runId, { workflowId: first.workflowId, lastSeq: first.seq - 1, terminal: false }, batch);
    return true;
  } catch {
    return false;
  }
}

/** Creates the tables (idempotent: create if not exists; one script) and returns the store. */
export function createSqlEventStore(
  sql: SyncSql,
  { manyRuns = true, packRows = false }: SqlEventStoreOptions = {},
): SqlEventStore {
  // A row's key is its last event's seq: the rows after `afterSeq` are those with a greater key.
  const readEvents = (runId: string, afterSeq = 0) =>
    sql
      .all<EventRow>("SELECT * FROM _workflow_events WHERE run_id = ? AND seq > ? ORDER BY seq", runId, afterSeq)
      .flatMap(unpackEventRow)
      .filter((event) => event.seq > afterSeq);
  migrateRunTable(sql, readEvents);
  sql.script(
    WORKFLOW_EVENTS_SCHEMA +
      (manyRuns
        ? RUN_TABLE_SCHEMA + EVENT_INDEXES_SCHEMA + RUN_ALL_INDEXES_SCHEMA
        : RUN_ACTOR_TABLE_SCHEMA + DROP_EVENT_INDEXES + RUN_NO_INDEXES_SCHEMA),
  );
  const index = createSqlRunIndex(sql, { schema: false });
  /** Whether the watchers' table exists: made by the first `waitForRun`, so a store that never has one pays nothing. */
  let watchersTable: boolean | undefined;
  const hasWatchers = () =>
    (watchersTable ??=
      sql.all("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_workflow_run_watchers'").length > 0);

  /** One statement per batch, in chunks under the bind limit; packed, a batch is usually one row. */
  const insertEvents = (events: StoredEvent[]) => {
    const rows = packRows ? packEventRows(events) : eventRowsOf(events);
    for (let from = 0; from < rows.length; from += ROWS_PER_INSERT) {
      const chunk = rows.slice(from, from + ROWS_PER_INSERT);
      const values: SqlValue[] = [];
      for (const row of chunk) values.push(row.run_id, row.seq, row.workflow_id, row.type, row.payload, row.at);
      sql.run(insertStatement(chunk.length), ...values);
    }
  };

  /** What a batch's change may read of its run, read only then (before the batch's own rows are written). */
  const before = (runId: string): RunBefore => ({
    status: () =>
      sql.all<{ status: RunStatus }>("SELECT status FROM _workflow_runs WHERE run_id = ?", runId)[0]?.status ??
      "running",
    state: () => {
      // A packed row may hold control events only: then look further back.
      for (let below = Number.MAX_SAFE_INTEGER; ; ) {
        const [row] = sql.all<EventRow>(
          `SELECT * FROM _workflow_events WHERE run_id = ? AND seq < ? AND type NOT IN (${CONTROL_TYPES}) ORDER BY seq DESC LIMIT 1`,
          runId,
          below,
        );
        if (!row) return null;
        const state = unpackEventRow(row).findLast((event) => !isControlEvent(event));
        if (state) return state;
        below = row.seq;
      }
    },
  });

  return {
    lastEvent(runId) {
      const [row] = sql.all<EventRow>(
        "SELECT * FROM _workflow_events WHERE run_id = ? ORDER BY seq DESC LIMIT 1",
        runId,
      );
      return row ? (unpackEventRow(row).at(-1) ?? null) : null;
    },

    createdEvent(runId) {
      // The first row: workflow_created alone, or packed with the events that followed it in its append.
      const [row] = sql.all<EventRow>("SELECT * FROM _workflow_events WHERE run_id = ? ORDER BY seq LIMIT 1", runId);
      const [first] = row ? unpackEventRow(row) : [];
      return first?.seq === 1 ? first : null;
    },

    events: readEvents,

    append(events): AppendResult {
      const byRun = groupBatch(events);
      try {
        sql.transaction(() => {
          for (const [runId, batch] of byRun) {
            const first = batch[0] as StoredEvent;
            // The usual case in one statement: a well-formed batch that continues the run's log takes
            // its place by moving the run's tail on, conditionally (no row back: it does not follow).
            const follows =
              wellFormed(runId, batch) &&
              sql.all(
                `UPDATE _workflow_runs SET ${ROW_CHANGE} WHERE run_id = ? AND workflow_id = ? AND last_seq = ? AND ${LIVE} RETURNING last_seq`,
                ...rowChange(batch, before(runId)),
                runId,
                first.workflowId,
                first.seq - 1,
              ).length > 0;
            if (!follows) {
              // Otherwise read the tail, so the answer is the same as every store's.
              const [run] = sql.all<RunRow>("SELECT * FROM _workflow_runs WHERE run_id = ?", runId);
              const seqTaken = checkRunBatch(
                runId,
                run
                  ? {
                      workflowId: run.workflow_id,
                      lastSeq: run.last_seq,
                      terminal: !(LIVE_STATUSES as readonly string[]).includes(run.status),
                    }
                  : null,
                batch,
              );
              if (seqTaken) throw new SeqTakenRollback(seqTaken);
              sql.run(
                `UPDATE _workflow_runs SET ${ROW_CHANGE} WHERE run_id = ?`,
                ...rowChange(batch, before(runId)),
                runId,
              );
            }
            insertEvents(batch);
          }
        });
      } catch (error) {
        if (error instanceof SeqTakenRollback) return { appended: false, seqTaken: error.seqTaken };
        throw error;
      }
      return { appended: true };
    },

    createRunIfNoActive(created, options = {}) {
      if (created.type !== "workflow_created" || created.seq !== 1) {
        throw new PlatformError("internal", "createRunIfNoActive takes the run's workflow_created event with seq 1");
      }
      const following = options.following ?? [];
      if (checkRunBatch(created.runId, { workflowId: created.workflowId, lastSeq: 1, terminal: false }, following))
        throw new PlatformError("internal", "The events after workflow_created must start at seq 2");
      return sql.transaction(() => {
        // One read for both refusals: an active run of the workflow id wins over a taken run id.
        const rows = sql.all<{ run_id: string; workflow_id: string; status: string }>(
          `SELECT run_id, workflow_id, status FROM _workflow_runs WHERE (workflow_id = ? AND ${LIVE}) OR run_id = ?`,
          created.workflowId,
          created.runId,
        );
        const active = rows.find(
          (row) => row.workflow_id === created.workflowId && (LIVE_STATUSES as readonly string[]).includes(row.status),
        );
        if (active) return { created: false as const, activeRunId: active.run_id };
        if (rows.length) return { created: false as const, seqTaken: { runId: created.runId, seq: 1 } };
        const all = [created, ...following];
        insertEvents(all);
        const last = all[all.length - 1] as StoredEvent;
        const { status, step, error } = summaryChange(all);
        const { version, rerunOf } = created.payload;
        sql.run(
          `INSERT INTO _workflow_runs (position, run_id, workflow_id, name, status, created_at, updated_at, last_seq, step, version, error, rerun_of, rerun_from_step, retention_ms)
           VALUES ((SELECT COALESCE(MAX(position), 0) + 1 FROM _workflow_runs), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          created.runId,
          created.workflowId,
          created.payload.workflowName,
          status ?? "running",
          created.at,
          last.at,
          last.seq,
          step ?? "start",
          version ?? null,
          error ?? null,
          rerunOf?.runId ?? null,
          rerunOf?.fromStep ?? null,
          options.retentionMS ?? DEFAULT_RETENTION_MS,
        );
        return { created: true as const };
      });
    },

    forgetRuns(runIds) {
      const watched = hasWatchers();
      sql.transaction(() => {
        for (const runId of runIds) {
          sql.run("DELETE FROM _workflow_events WHERE run_id = ?", runId);
          sql.run("DELETE FROM _workflow_runs WHERE run_id = ?", runId);
          if (watched) sql.run("DELETE FROM _workflow_run_watchers WHERE run_id = ?", runId);
        }
      });
    },

    watchRun(runId, watcherRunId) {
      if (!hasWatchers()) {
        sql.script(RUN_WATCHERS_SCHEMA);
        watchersTable = true;
      }
      sql.run(
        "INSERT OR IGNORE INTO _workflow_run_watchers (run_id, watcher_run_id) VALUES (?, ?)",
        runId,
        watcherRunId,
      );
    },

    runWatchers(runId) {
      if (!hasWatchers()) return [];
      return sql
        .all<{ watcher_run_id: string }>(
          "SELECT watcher_run_id FROM _workflow_run_watchers WHERE run_id = ? ORDER BY watcher_run_id",
          runId,
        )
        .map((row) => row.watcher_run_id);
    },

    getRun: index.getRun,
    getReport: index.getReport,
    listRuns: index.listRuns,
    activeRunIds: index.activeRunIds,
    matchRunIds: index.matchRunIds,
    livePositions: index.livePositions,
    liveRunsAt: index.liveRunsAt,
    expiredRunIds: index.expiredRunIds,
    latestRunOf: index.latestRunOf,
  };
}
