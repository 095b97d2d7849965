import type { SyncSql } from "../engine/storage/syncSql.ts";
import { execMetered } from "./storageMeter.ts";

/**
 * A Durable Object's SQLite storage behind the engine's SyncSql surface.
 * `storage.sql` is read once, here: an actor that calls this in its
 * constructor keeps the handle of its own context, even when its first
 * statement runs later (a first `storage.sql` read from another context, such
 * as a test's runInDurableObject during an eviction, fails with "Cannot
 * perform I/O on behalf of a different Durable Object").
 */
export function durableObjectSql(storage: DurableObjectStorage): SyncSql {
  const db = storage.sql;
  return {
    all: (sql, ...params) => execMetered(db, sql, ...params) as never,
    run: (sql, ...params) => void execMetered(db, sql, ...params),
    // exec runs every statement of a text without bindings, so a schema costs one call.
    script: (sql) => void execMetered(db, sql),
    transaction: (fn) => storage.transactionSync(fn),
  };
}
