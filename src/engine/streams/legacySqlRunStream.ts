import { freezeJson, utf8ByteLength, type JsonValue } from "../api/json.ts";
import { checkStreamRoom, type StreamMessage, type StreamMessageInput, type StreamQuery } from "./runStream.ts";
import type { SqlValue, SyncSql } from "../storage/syncSql.ts";

/**
 * The streams of runs that began before lifecycle messages were read from
 * the log: table `_workflow_stream`, one row per message, the lifecycle's
 * included, each with its offset. Such a run keeps this layout until it is
 * forgotten, so its offsets never move; nothing new creates the table.
 */
export interface LegacyRunStreams {
  /** Whether `runId`'s stream is kept in the old layout. */
  holds(runId: string): boolean;
  /** Appends at the run's next offset (checked against the limits) and answers the stored message. */
  append(runId: string, message: StreamMessageInput): StreamMessage;
  /** The run's messages matching `query`, in offset order. */
  read(runId: string, query: StreamQuery): StreamMessage[];
  forgetRuns(runIds: readonly string[]): void;
}

interface StreamRow extends Record<string, SqlValue> {
  offset: number;
  topic: string;
  data: string;
  at: number;
  step: string;
  attempt: number;
}

export function createLegacySqlRunStream(sql: SyncSql): LegacyRunStreams {
  let exists: boolean | undefined;
  const tableExists = () =>
    (exists ??= sql.all("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_workflow_stream'").length > 0);
  const held = new Map<string, boolean>();
  const totalsOf = new Map<string, { messages: number; bytes: number }>();
  return {
    holds(runId) {
      let holds = held.get(runId);
      if (holds === undefined) {
        holds = tableExists() && sql.all("SELECT 1 FROM _workflow_stream WHERE run_id = ? LIMIT 1", runId).length > 0;
        held.set(runId, holds);
      }
      return holds;
    },
    append(runId, input) {
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
      if (runIds.length === 0 || !tableExists()) return;
      for (const runId of runIds) {
        sql.run("DELETE FROM _workflow_stream WHERE run_id = ?", runId);
        totalsOf.delete(runId);
        held.delete(runId);
      }
    },
  };
}
