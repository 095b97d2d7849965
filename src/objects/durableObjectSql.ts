import type { SyncSql } from "../runtime/workflow/syncSql.ts";

/** A Durable Object's SQLite storage behind the engine's SyncSql surface. */
export function durableObjectSql(storage: DurableObjectStorage): SyncSql {
  return {
    all: (sql, ...params) => storage.sql.exec(sql, ...params).toArray() as never,
    run: (sql, ...params) => void storage.sql.exec(sql, ...params),
    transaction: (fn) => storage.transactionSync(fn),
  };
}
