import {
  createLocalWorkflowBackend,
  type LocalWorkflowBackend,
  type LocalWorkflowBackendOptions,
} from "../../engine/localBackend.ts";
import { installWorkflowBackend } from "../../engine/workflowApi.ts";
import { openSqliteWorkflowStore, type SqliteWorkflowStore } from "./sqliteEventStore.ts";

/** The recovery cron runs every minute. */
export const RECOVERY_INTERVAL_MS = 60_000;

export interface NodeWorkflowBackendOptions extends Omit<LocalWorkflowBackendOptions, "store"> {
  /** SQLite file (parent directories are created), e.g. `<project>/.platform/workflows.sqlite`; ":memory:" for a throwaway store. */
  path: string;
  /** Interval of the recovery sweep; default one minute. */
  recoveryIntervalMS?: number;
}

export interface NodeWorkflowBackend extends LocalWorkflowBackend {
  readonly store: SqliteWorkflowStore;
}

/**
 * The workflow engine in plain Node 22 (for local development): the event
 * log in node:sqlite, a zero-delay timer loop instead of a queue, and a
 * recovery sweep at start-up (timers do not survive a restart) and every
 * minute, logging "Re-enqueued N workflow(s)". This process is the only
 * executor of its file, so at start-up every step the
 * previous process left in flight is recorded at once as failed with reason
 * "interrupted" and retried, and runs that sleep or wait get their timers
 * back. `close()` stops the timers, waits for running executions to reach a
 * step boundary and closes the file.
 */
export function createNodeWorkflowBackend(options: NodeWorkflowBackendOptions): NodeWorkflowBackend {
  const store = openSqliteWorkflowStore(options.path);
  const local = createLocalWorkflowBackend({ ...options, store });
  // Deferred one tick so workflows registered right after creation are known to the sweep.
  const startup = setTimeout(() => local.recoverAtStartup(), 0);
  const sweep = setInterval(() => local.recoverNow(), options.recoveryIntervalMS ?? RECOVERY_INTERVAL_MS);
  // The sweep alone must not keep a finished script alive; pending retries and steps do.
  sweep.unref();
  return {
    ...local,
    store,
    async close() {
      clearTimeout(startup);
      clearInterval(sweep);
      await local.close();
      store.close();
    },
  };
}

/** Creates the Node backend and makes `workflow.start/get/list` of the `platform` module use it. */
export function installNodeWorkflowBackend(options: NodeWorkflowBackendOptions): NodeWorkflowBackend {
  const backend = createNodeWorkflowBackend(options);
  installWorkflowBackend(backend);
  return backend;
}
