import type { DatabaseSync, StatementSync } from "node:sqlite";
import type { SyncSql } from "../../engine/storage/syncSql.ts";

/** node:sqlite behind the engine's SyncSql surface, with prepared statements cached by text. */
export function nodeSyncSql(db: DatabaseSync): SyncSql {
  const statements = new Map<string, StatementSync>();
  const prepare = (sql: string) => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };
  let depth = 0;
  return {
    all: (sql, ...params) => prepare(sql).all(...params) as never,
    run: (sql, ...params) => void prepare(sql).run(...params),
    script: (sql) => db.exec(sql),
    transaction(fn) {
      // Savepoints nest, so a transaction inside a transaction stays all-or-nothing.
      const name = `sp${depth++}`;
      db.exec(`SAVEPOINT ${name}`);
      try {
        const result = fn();
        db.exec(`RELEASE ${name}`);
        return result;
      } catch (error) {
        db.exec(`ROLLBACK TO ${name}`);
        db.exec(`RELEASE ${name}`);
        throw error;
      } finally {
        depth--;
      }
    },
  };
}
