// `platform/node`: the platform runtime pieces that need Node 22 (node:sqlite).
// Never imported by worker code: the bundler refuses it there.
export { createNodeWorkflowBackend, installNodeWorkflowBackend, RECOVERY_INTERVAL_MS } from "./nodeWorkflowBackend.ts";
export type { NodeWorkflowBackend, NodeWorkflowBackendOptions } from "./nodeWorkflowBackend.ts";
export { openSqliteWorkflowStore } from "./sqliteEventStore.ts";
export type { SqliteWorkflowStore } from "./sqliteEventStore.ts";
// The same registry user code reaches through `platform`, so a Node entry can install into it.
export { workflow, NonRetryableError, RetryAfterError, installWorkflowBackend } from "../../engine/index.ts";
