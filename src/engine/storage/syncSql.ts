export type SqlValue = string | number | null;

/**
 * The synchronous SQLite surface both backends have: Durable Object storage
 * (`ctx.storage.sql`, `transactionSync`) and Node's `node:sqlite`. The event
 * store and the run index are written once against it.
 */
export interface SyncSql {
  all<Row extends Record<string, SqlValue>>(sql: string, ...params: SqlValue[]): Row[];
  run(sql: string, ...params: SqlValue[]): void;
  /** Runs several statements without parameters in one call (a schema). */
  script(sql: string): void;
  /** Runs `fn` in one transaction: all of its writes, or none if it throws. */
  transaction<T>(fn: () => T): T;
}

/** The `run_id` column of a query's rows, in their order (the run index's and bulk operations' id lists). */
export function selectRunIds(sql: SyncSql, query: string, ...params: SqlValue[]): string[] {
  return sql.all<{ run_id: string }>(query, ...params).map((row) => row.run_id);
}
