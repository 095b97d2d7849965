import {
  createLocalWorkflowBackend,
  type LocalWorkflowBackend,
  type LocalWorkflowBackendOptions,
} from "../../engine/localBackend.ts";
import { installWorkflowBackend } from "../../engine/workflowApi.ts";
import { openSqliteWorkflowStore, type SqliteWorkflowStore } from "./sqliteEventStore.ts";

/** Spec: the recovery cron runs every minute. */
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
 * The workflow engine in plain Node 22 (spec: local development): the event
 * log in node:sqlite, a zero-delay timer loop instead of a queue, and a
 * recovery sweep at start-up (timers do not survive a restart) and every
 * minute, logging "Re-enqueued N workflow(s)"; at start-up it also drives
 * runs whose step was cut off by the previous process, so they resume as soon
 * as that step times out. `close()` stops the timers,
 * waits for running executions to reach a step boundary and closes the file.
 */
export function createNodeWorkflowBackend(options: NodeWorkflowBackendOptions): NodeWorkflowBackend {
  const store = openSqliteWorkflowStore(options.path);
  const local = createLocalWorkflowBackend({ ...options, store });
  // Deferred one tick so workflows registered right after creation are known to the sweep.
  const startup = setTimeout(() => {
    local.recoverNow();
    resumeInFlight();
  }, 0);
  /**
   * A step the previous process was running when it died is not stuck until
   * its stepTimeoutMS has passed, so the sweep leaves it alone. This process
   * is now the only executor of the file: drive each such run, which waits
   * out the timeout, records it and retries, instead of waiting for the next
   * minute's sweep.
   */
  const resumeInFlight = () => {
    let resumed = 0;
    for (const runId of store.activeRunIds()) {
      if (store.lastEvent(runId)?.type !== "step_started") continue;
      local.kick(runId);
      resumed++;
    }
    if (resumed > 0)
      (options.log ?? console.log)(
        `Resuming ${resumed} workflow run(s) whose step was cut off, once the step timeout passes`,
      );
  };
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
