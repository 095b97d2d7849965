import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { DatabaseSync } from "node:sqlite";
import type { BulkOperationLog } from "../../engine/control/bulkOperation.ts";
import { createSqlBulkOperationLog } from "../../engine/storage/sqlBulkOperations.ts";
import { createSqlEventStore } from "../../engine/storage/sqlEventStore.ts";
import type { WorkflowEventStore, RunIndex } from "../../engine/storage/store.ts";
import { nodeSyncSql } from "./nodeSyncSql.ts";
import { createSqlRunStream } from "../../engine/streams/sqlRunStream.ts";
import type { RunStreamStore } from "../../engine/streams/runStream.ts";
import { createLegacySqlRunStream, type LegacyRunStreams } from "../../engine/streams/legacySqlRunStream.ts";

/**
 * @example
 * const store: SqliteWorkflowStore = openSqliteWorkflowStore(":memory:");
 * console.log(store.activeRunIds());
 * store.close();
 */
export interface SqliteWorkflowStore extends WorkflowEventStore, RunIndex, BulkOperationLog {
  readonly db: DatabaseSync;
  /** The runs' streams (`ctx.publish`), in the same file. */
  readonly stream: RunStreamStore;
  /** The streams of runs that began before the lifecycle was read from the log, in their old table. */
  readonly legacyStreams: LegacyRunStreams;
  close(): void;
}

/**
 * Opens (creating if needed) the workflow store in a SQLite file, or
 * ":memory:". The tables and queries are the shared SQL event store the
 * Durable Object backend uses too (src/engine/storage/sqlEventStore.ts), so a file
 * written by one process is readable by the other code path.
 * @example
 * const store = openSqliteWorkflowStore(":memory:");
 * const summary = store.getRun(runId);
 * store.close();
 */
export function openSqliteWorkflowStore(path: string): SqliteWorkflowStore {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new DatabaseSync(path);
  // WAL + a busy timeout so another process (e.g. `platform workflow list`) can read while dev runs.
  // synchronous = NORMAL (per connection, so set at every open): in WAL mode a commit is durable once written
  // to the WAL, so a crash of this process loses nothing committed; only an OS crash or power loss can lose the
  // last commits (the WAL is fsynced at checkpoints, not at each commit). That is what local development
  // (`platform dev --node`) needs, and it saves an fsync per commit: bench section B prints both settings.
  db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;");
  const sql = nodeSyncSql(db);
  const store = createSqlEventStore(sql);
  return {
    ...store,
    ...createSqlBulkOperationLog(sql),
    db,
    stream: createSqlRunStream(sql),
    legacyStreams: createLegacySqlRunStream(sql),
    close() {
      if (db.isOpen) db.close();
    },
  };
}
