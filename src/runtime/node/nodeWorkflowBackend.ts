import {
  createLocalWorkflowBackend,
  type LocalWorkflowBackend,
  type LocalWorkflowBackendOptions,
} from "../../engine/backends/localBackend.ts";
import { systemClock } from "../../engine/api/clock.ts";
import { installWorkflowBackend, startDueScheduledRuns, workflowDefinitions } from "../../engine/api/workflowApi.ts";
import { minuteOf } from "../../core/cronSchedule.ts";
import { type ProjectSchedule, projectSchedules, scheduleCronName } from "../../contracts/workflowSchedules.ts";
import { workflowRunHost } from "../../objects/workflowRunHost.ts";
import { openSqliteWorkflowStore, type SqliteWorkflowStore } from "./sqliteEventStore.ts";

/**
 * The recovery cron runs every minute.
 * @example
 * setInterval(() => backend.recoverNow(), RECOVERY_INTERVAL_MS);
 */
export const RECOVERY_INTERVAL_MS = 60_000;

const MINUTE_MS = 60_000;

/**
 * @example
 * const options: NodeWorkflowBackendOptions = { path: ":memory:", log: (line) => console.log(line) };
 * const backend = createNodeWorkflowBackend(options);
 */
export interface NodeWorkflowBackendOptions extends Omit<LocalWorkflowBackendOptions, "store"> {
  /** SQLite file (parent directories are created), e.g. `<project>/.platform/workflows.sqlite`; ":memory:" for a throwaway store. */
  path: string;
  /** Interval of the recovery sweep; default one minute. */
  recoveryIntervalMS?: number;
  /** The project's environment, as a worker's `fetch` gets it: its string values but `PLATFORM_*` are what steps read as `ctx.env`. */
  env?: Record<string, unknown>;
}

/**
 * @example
 * const backend: NodeWorkflowBackend = createNodeWorkflowBackend({ path: ".platform/workflows.sqlite" });
 * backend.recoverAtStartup();
 */
export interface NodeWorkflowBackend extends LocalWorkflowBackend {
  readonly store: SqliteWorkflowStore;
  /** The registered workflows' schedules, each with its next tick after now. */
  schedules(): ProjectSchedule[];
}

/**
 * The workflow engine in plain Node 22 (for local development): the event
 * log in node:sqlite, a zero-delay timer loop instead of a queue, and a
 * recovery sweep at start-up (timers do not survive a restart) and every
 * minute, logging "Re-enqueued N workflow(s)". As the platform's scheduler
 * does, it also starts the scheduled workflows due at each minute, on the
 * minute, logging one line per start. This process is the only executor of
 * its file, so at start-up every step the
 * previous process left in flight is recorded at once as failed with reason
 * "interrupted" and retried, and runs that sleep or wait get their timers
 * back. `close()` stops the timers, waits for running executions to reach a
 * step boundary and closes the file.
 * @example
 * const backend = createNodeWorkflowBackend({ path: ".platform/workflows.sqlite" });
 * const { runs } = await backend.list({ limit: 10 });
 * await backend.close();
 */
export function createNodeWorkflowBackend(options: NodeWorkflowBackendOptions): NodeWorkflowBackend {
  const store = openSqliteWorkflowStore(options.path);
  const local = createLocalWorkflowBackend({
    ...options,
    store,
    stream: store.stream,
    legacyStreams: store.legacyStreams,
  });
  // Deferred one tick so workflows registered right after creation are known to the sweep.
  const startup = setTimeout(() => local.recoverAtStartup(), 0);
  const sweep = setInterval(() => local.recoverNow(), options.recoveryIntervalMS ?? RECOVERY_INTERVAL_MS);
  // The sweep alone must not keep a finished script alive; pending retries and steps do.
  sweep.unref();
  const now = options.now ?? systemClock;
  let minuteTimer: ReturnType<typeof setTimeout> | undefined;
  let delivered = 0;
  const fireOnTheMinute = () => {
    // Each minute once, even if a timer fires a hair early.
    const minute = Math.max(minuteOf(now()) + MINUTE_MS, delivered + MINUTE_MS);
    delivered = minute;
    minuteTimer = setTimeout(() => {
      // The minute it was set for, not the time it fired: a late timer still names its tick.
      void startDueScheduledRuns(local, minute).then((lines) => {
        for (const line of lines) (options.log ?? console.log)(line);
      });
      fireOnTheMinute();
    }, minute - now());
    minuteTimer.unref();
  };
  fireOnTheMinute();
  return {
    ...local,
    store,
    schedules() {
      const crons = workflowDefinitions().flatMap(({ name, schedule }) =>
        schedule ? [{ name: scheduleCronName(name), schedule: schedule.cron, timezone: schedule.timezone }] : [],
      );
      return projectSchedules(crons, now());
    },
    async close() {
      clearTimeout(startup);
      clearInterval(sweep);
      clearTimeout(minuteTimer);
      await local.close();
      store.close();
    },
  };
}

/**
 * Creates the Node backend and makes `workflow.start/get/list` of the `platform` module use it; with
 * `env`, the runtime takes that environment (before any request brings one), so steps resumed at
 * start-up read `ctx.env` too.
 * @example
 * import { installNodeWorkflowBackend, workflow } from "platform/node";
 * installNodeWorkflowBackend({ path: ".platform/workflows.sqlite" });
 * const run = await workflow.start("greet", { name: "Ada" });
 */
export function installNodeWorkflowBackend(options: NodeWorkflowBackendOptions): NodeWorkflowBackend {
  // As a run actor hands the runtime its environment (workflowRunHost.ts).
  if (options.env) workflowRunHost.useEnv(options.env);
  const backend = createNodeWorkflowBackend(options);
  installWorkflowBackend(backend);
  return backend;
}
