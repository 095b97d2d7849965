import { utf8ByteLength } from "../api/json.ts";
import type { PublishedMessage, RunStreamStore, StreamTotals } from "./runStream.ts";
import type { SqlValue, SyncSql } from "../storage/syncSql.ts";

/**
 * What steps publish, in a table of its own beside `_workflow_events`,
 * created on the first publish. The lifecycle messages are not here: readers
 * derive them from the log (streamMerge.ts), which saves a written row per
 * message. `_workflow_stream` (legacySqlRunStream.ts) is the layout before.
 */
const PUBLISHED_SCHEMA = `CREATE TABLE IF NOT EXISTS _workflow_published (
    run_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    after_seq INTEGER NOT NULL,
    topic TEXT NOT NULL,
    data TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    at INTEGER NOT NULL,
    step TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    PRIMARY KEY (run_id, position)
  ) WITHOUT ROWID;`;

interface PublishedRow extends Record<string, SqlValue> {
  afterSeq: number;
  topic: string;
  json: string;
  at: number;
  step: string;
  attempt: number;
}

/**
 * Runs' published messages in SQLite (node:sqlite, a run actor's storage):
 * one row per message. The only writer of its database (one actor, one
 * `platform dev --node` process), it keeps each run's totals once read, so a
 * publish costs one insert, not a scan of the run's messages. Reading a run
 * that never published creates nothing.
 */
export function createSqlRunStream(sql: SyncSql): RunStreamStore {
  let exists: boolean | undefined;
  const tableExists = () =>
    (exists ??=
      sql.all("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_workflow_published'").length > 0);
  const totalsOf = new Map<string, StreamTotals>();
  const totals = (runId: string): StreamTotals => {
    let known = totalsOf.get(runId);
    if (!known) {
      const [row] = tableExists()
        ? sql.all<{ messages: number; bytes: number | null }>(
            "SELECT COUNT(*) AS messages, SUM(bytes) AS bytes FROM _workflow_published WHERE run_id = ?",
            runId,
          )
        : [];
      known = { messages: row?.messages ?? 0, bytes: row?.bytes ?? 0 };
      totalsOf.set(runId, known);
    }
    return known;
  };
  return {
    append(runId, message: PublishedMessage) {
      if (!tableExists()) {
        sql.script(PUBLISHED_SCHEMA);
        exists = true;
      }
      const known = totals(runId);
      const bytes = utf8ByteLength(message.json);
      sql.run(
        "INSERT INTO _workflow_published (run_id, position, after_seq, topic, data, bytes, at, step, attempt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        runId,
        known.messages,
        message.afterSeq,
        message.topic,
        message.json,
        bytes,
        message.at,
        message.step,
        message.attempt,
      );
      known.messages += 1;
      known.bytes += bytes;
    },
    published(runId) {
      if (!tableExists()) return [];
      return sql.all<PublishedRow>(
        "SELECT after_seq AS afterSeq, topic, data AS json, at, step, attempt FROM _workflow_published WHERE run_id = ? ORDER BY position",
        runId,
      );
    },
    totals(runId) {
      return { ...totals(runId) };
    },
    forgetRuns(runIds) {
      for (const runId of runIds) totalsOf.delete(runId);
      if (runIds.length === 0 || !tableExists()) return;
      for (const runId of runIds) sql.run("DELETE FROM _workflow_published WHERE run_id = ?", runId);
    },
  };
}
