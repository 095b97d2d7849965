import { DatabaseSync } from "node:sqlite";
import { nodeSyncSql } from "#src/runtime/node/nodeSyncSql.ts";
import { createSqlEventStore } from "#src/engine/sqlEventStore.ts";
import { describeEventStoreConformance } from "#test/conformance/eventStoreConformance.ts";

describeEventStoreConformance("SQL store on node:sqlite", () => {
  const db = new DatabaseSync(":memory:");
  return { store: createSqlEventStore(nodeSyncSql(db)), close: () => db.close() };
});
