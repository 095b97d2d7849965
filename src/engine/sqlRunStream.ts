import { freezeJson, utf8ByteLength, type JsonValue } from "./json.ts";
import { checkStreamRoom, type RunStreamStore, type StreamMessage } from "./runStream.ts";
import type { SqlValue, SyncSql } from "./syncSql.ts";

/**
 * A table of its own, beside `_workflow_events` (the event log and its
 * conformance are untouched), created on the first publish or read.
 */
const STREAM_SCHEMA = `CREATE TABLE IF NOT EXISTS _workflow_stream (
    run_id TEXT NOT NULL,
    message_offset INTEGER NOT NULL,
    topic TEXT NOT NULL,
    data TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    at INTEGER NOT NULL,
    step TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    PRIMARY KEY (run_id, message_offset)
  ) WITHOUT ROWID;`;

interface StreamRow extends Record<string, SqlValue> {
  offset: number;
  topic: string;
  data: string;
  at: number;
  step: string;
  attempt: number;
}

/**
 * Runs' streams in SQLite (node:sqlite, a run actor's storage): one row per
 * message. The only writer of its database (one actor, one `platform dev
 * --node` process), it keeps each run's totals once read, so a publish costs
 * one insert, not a scan of the run's stream.
 */
export function createSqlRunStream(sql: SyncSql): RunStreamStore {
  let ready = false;
  const totalsOf = new Map<string, { messages: number; bytes: number }>();
  const schema = () => {
    if (ready) return;
    sql.script(STREAM_SCHEMA);
    ready = true;
  };
  return {
    append(runId, input) {
      schema();
      let totals = totalsOf.get(runId);
      if (!totals) {
        const [row] = sql.all<{ messages: number; bytes: number | null }>(
          "SELECT COUNT(*) AS messages, SUM(bytes) AS bytes FROM _workflow_stream WHERE run_id = ?",
          runId,
        );
        totals = { messages: row?.messages ?? 0, bytes: row?.bytes ?? 0 };
        totalsOf.set(runId, totals);
      }
      checkStreamRoom(totals, input, runId);
      const messages = totals.messages;
      const bytes = utf8ByteLength(input.json);
      sql.run(
        "INSERT INTO _workflow_stream (run_id, message_offset, topic, data, bytes, at, step, attempt) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        runId,
        messages,
        input.topic,
        input.json,
        bytes,
        input.at,
        input.step,
        input.attempt,
      );
      totals.messages += 1;
      totals.bytes += bytes;
      const { json, ...rest } = input;
      return Object.freeze({ ...rest, offset: messages, data: freezeJson(JSON.parse(json) as JsonValue) });
    },
    read(runId, { from, topics, limit }) {
      schema();
      const topicFilter = topics ? ` AND topic IN (${topics.map(() => "?").join(", ")})` : "";
      const rows = sql.all<StreamRow>(
        `SELECT message_offset AS offset, topic, data, at, step, attempt FROM _workflow_stream WHERE run_id = ? AND message_offset >= ?${topicFilter} ORDER BY message_offset LIMIT ?`,
        runId,
        from,
        ...(topics ?? []),
        limit,
      );
      return rows.map(
        (row): StreamMessage =>
          Object.freeze({
            offset: row.offset,
            topic: row.topic,
            data: freezeJson(JSON.parse(row.data) as JsonValue),
            at: row.at,
            step: row.step,
            attempt: row.attempt,
          }),
      );
    },
    forgetRuns(runIds) {
      if (runIds.length === 0) return;
      schema();
      for (const runId of runIds) {
        sql.run("DELETE FROM _workflow_stream WHERE run_id = ?", runId);
        totalsOf.delete(runId);
      }
    },
  };
}
