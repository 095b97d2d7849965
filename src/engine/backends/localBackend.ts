import { PlatformError } from "../../core/errors.ts";
import type { BulkAction, BulkOperationLog, BulkResult } from "../control/bulkOperation.ts";
import { systemClock, type Clock } from "../api/clock.ts";
import type { WorkflowDefinition } from "../api/definition.ts";
import { awaitedRunOf, describeRun, type WorkflowRunView } from "../execution/describeRun.ts";
import { isTerminalEvent, type StoredEvent } from "../execution/events.ts";
import { createRun, onceRunKey, type CreatedRun } from "../execution/createRun.ts";
import {
  activeChildrenOf,
  childReportOf,
  isAlreadyEnded,
  reconcileChildren,
  recordChildFinished,
} from "../control/children.ts";
import { type AwaitRunPort, executeRun } from "../execution/executeRun.ts";
import { failInterruptedStep, recoverRun } from "../control/recovery.ts";
import {
  appendCallbackEvent,
  appendReceivedEvent,
  cancelRun,
  deliverRunEnded,
  pauseRun,
  resumeRun,
  watchRunEnd,
} from "../control/runControl.ts";
import { lastStateEvent } from "../control/receivedEvents.ts";
import { sendOrStartRun } from "../control/sendOrStart.ts";
import type { QueueRank } from "../flow/flowControl.ts";
import { createLocalFlowQueues } from "../flow/localFlowQueues.ts";
import { toRunListQuery, type RunFilter } from "../storage/runQuery.ts";
import { isLiveStatus, type WorkflowEventStore, type RunIndex } from "../storage/store.ts";
import { findStrandedRuns } from "../control/strandedRuns.ts";
import { createLiveRunStream, type LiveRunStream, STREAM_WAIT_SLICE_MS } from "../streams/liveRunStream.ts";
import { createMemoryRunStream } from "../streams/memoryRunStream.ts";
import { createLocalBulkOperations } from "./localBulkOperations.ts";
import { createLocalChildRuns } from "./localChildRuns.ts";
import { startLocalRerun } from "./localRerun.ts";
import { createLocalRunScheduler } from "./localRunScheduler.ts";
import { createLocalRunWaiters } from "./localRunWaiters.ts";
import type { RunStreamStore } from "../streams/runStream.ts";
import type { LegacyRunStreams } from "../streams/legacySqlRunStream.ts";
import { getWorkflowDefinition, RESULT_POLL_INTERVAL_MS, type WorkflowBackend } from "../api/workflowApi.ts";

/** Finished runs past their retention deleted per sweep at most (the next sweep deletes more). */
export const EXPIRED_RUNS_PER_SWEEP = 5_000;

export interface LocalWorkflowBackendOptions {
  store: WorkflowEventStore & RunIndex & BulkOperationLog;
  /** The project version of the code this process runs (`v3`), recorded on the runs it starts. */
  version?: string;
  /** Where definitions come from; default: the `workflow()` registry. */
  definitions?: (name: string) => WorkflowDefinition | undefined;
  /** Default: crypto.randomUUID(). */
  newRunId?: () => string;
  /** Default: the system clock. */
  now?: Clock;
  /** Step-loop budget per execution; default 50 s. */
  budgetMS?: number;
  /** Recovery results ("Re-enqueued N workflow(s)"); default console.log. */
  log?: (message: string) => void;
  /** Executions that threw; default console.error. */
  logError?: (message: string, error: unknown) => void;
  /** How long `close()` waits for running steps before giving up on them; default 5 s. */
  closeGraceMS?: number;
  /** Where the runs' streams are kept (`ctx.publish`); default: in memory. */
  stream?: RunStreamStore;
  /** Where runs that began before the lifecycle was read from the log keep their streams (a node:sqlite file's old table). */
  legacyStreams?: LegacyRunStreams;
}

export interface LocalWorkflowBackend extends WorkflowBackend {
  /** The runs' streams and their waiting readers. */
  readonly stream: LiveRunStream;
  waitForTerminal(runId: string): Promise<WorkflowRunView>;
  /** Starts (or continues) executing a run on the next tick. */
  kick(runId: string): void;
  /**
   * One recovery sweep over the active runs this process is not driving;
   * logs and returns how many were re-enqueued. It also
   * deletes finished runs past their retention (logged when there are any).
   */
  recoverNow(): number;
  /**
   * The sweep of a process that has just opened a store another process wrote
   * (fast crash recovery): every step in flight there lost its executor with that
   * process, so it is recorded at once as step_failed{reason "interrupted"}
   * (retryable) rather than after its timeout; then the usual sweep. Logs one
   * line counting both; returns how many runs were re-enqueued. Bulk
   * operations the previous process left unfinished carry on.
   */
  recoverAtStartup(): number;
  /**
   * Stops scheduling, rejects pending waits, and gives running executions up
   * to `closeGraceMS` to reach their next step boundary. A step still running
   * after that is abandoned: its step_started stays in the log and the next
   * process's recovery sweep records it as a timeout (at-least-once).
   */
  close(): Promise<void>;
}

const CHILD_RUN_ID = /\.[0-9]+\.[0-9]+$/;

/**
 * The engine in one process with no queue (for local development). A
 * zero-delay timer loop replaces the queue: `kick` schedules an execution,
 * which is rescheduled at once when its budget runs out, at `wakeAt` while a
 * retry, a sleep or a wait's timeout is due, and at `timeoutAt` while another
 * process holds a step; `send` kicks a run that waits for an event.
 * Shared by the memory backend and the node:sqlite backend.
 */
export function createLocalWorkflowBackend(options: LocalWorkflowBackendOptions): LocalWorkflowBackend {
  const { store } = options;
  const definitions = options.definitions ?? getWorkflowDefinition;
  const now = options.now ?? systemClock;
  const newRunId = options.newRunId ?? (() => crypto.randomUUID());
  const log = options.log ?? ((message: string) => console.log(message));
  const logError = options.logError ?? ((message: string, error: unknown) => console.error(message, error));

  const reportedMissing = new Set<string>();
  const stop = new AbortController();
  const scheduler = createLocalRunScheduler((runId) => executeOnce(runId), stop.signal);
  const { schedule, kick } = scheduler;
  const waiters = createLocalRunWaiters(store, RESULT_POLL_INTERVAL_MS);
  const settle = waiters.settle;
  const live = createLiveRunStream(options.stream ?? createMemoryRunStream(), store, options.legacyStreams);
  const flowQueues = createLocalFlowQueues({ store, definitions, now, started: (runId) => kick(runId) });

  const closedError = () => new PlatformError("not_ready", "The workflow backend was closed");

  function definitionOf(runId: string): WorkflowDefinition | null {
    const summary = store.getRun(runId);
    if (!summary) return null;
    const definition = definitions(summary.name);
    if (!definition && !reportedMissing.has(runId)) {
      reportedMissing.add(runId);
      logError(
        `Workflow run ${runId} cannot continue: workflow "${summary.name}" is not registered`,
        new PlatformError("unknown_workflow", `Unknown workflow "${summary.name}"`),
      );
    }
    return definition ?? null;
  }

  const children = createLocalChildRuns({ store, definitions, now, kick, cancelIfActive });

  /** Runs waited for are runs of this same store: a waiter is recorded with the run, which tells it when it ends. */
  const awaitRun: AwaitRunPort = {
    watch: async (waiterRunId, awaitedRunId) => watchRunEnd(store, awaitedRunId, waiterRunId),
  };

  async function executeOnce(runId: string): Promise<void> {
    const definition = definitionOf(runId);
    if (!definition) return;
    try {
      const result = await executeRun(store, definition, runId, {
        now,
        budgetMS: options.budgetMS,
        signal: stop.signal,
        onEvent: noticeEvent,
        stream: live,
        children,
        awaitRun,
      });
      switch (result.status) {
        case "terminal":
          flowQueues.ended(runId);
          settle(runId);
          break;
        case "waiting":
          schedule(runId, result.wakeAt - now());
          break;
        case "budget_exhausted":
          schedule(runId, 0);
          break;
        case "in_flight":
          schedule(runId, result.timeoutAt - now());
          break;
        // Waiting for an event without a timeout: `send` kicks the run; a paused one: `resume` does.
        case "idle":
        case "stopped":
        case "paused":
          break;
      }
    } catch (error) {
      // After close() the store may be gone; recovery picks the run up in the next process.
      if (stop.signal.aborted) return;
      // Not rescheduled: an error here is a store or engine fault; the recovery sweep retries the run.
      logError(`Workflow run ${runId} stopped with an error; the recovery sweep will retry it`, error);
    }
  }

  function noticeEvent(event: StoredEvent): void {
    live.publishLifecycle(event);
    if (!isTerminalEvent(event)) return;
    flowQueues.ended(event.runId);
    settle(event.runId);
    tellParent(event.runId);
    tellWatchers(event.runId);
  }

  /** A run that ended tells the runs waiting for it (`waitForRun`), which go on at once. */
  function tellWatchers(runId: string): void {
    const watchers = store.runWatchers(runId);
    if (watchers.length === 0) return;
    const view = describeRun(store.events(runId));
    if (!view || isLiveStatus(view.status)) return;
    const ended = awaitedRunOf(view);
    for (const watcher of watchers) if (deliverRunEnded(store, watcher, ended, now())) kick(watcher);
  }

  /** A run waiting for another that ended while this process was not there to tell it. */
  function reconcileAwaited(runId: string): void {
    const state = lastStateEvent(store.events(runId));
    if (state?.type !== "step_completed" || state.payload.waiting_for_run === undefined) return;
    const view = describeRun(store.events(state.payload.waiting_for_run));
    if (view && !isLiveStatus(view.status)) deliverRunEnded(store, runId, awaitedRunOf(view), now());
  }

  /**
   * A child that ended tells its parent (no polling), which goes on once its
   * last child has. Children started here have their key as run id
   * (`<parent run id>.<n>.<index>`): only such runs are read for a parent.
   */
  function tellParent(runId: string): void {
    if (!CHILD_RUN_ID.test(runId)) return;
    const report = childReportOf(store.events(runId));
    if (!report) return;
    if (recordChildFinished(store, { ...report, now: now() }).allFinished) kick(report.parentRunId);
  }

  /** Cancels a run, then its active children (and theirs); a run that has ended meanwhile is left alone. */
  function cancelIfActive(runId: string, reason: string): void {
    try {
      cancelWithChildren(runId, reason);
    } catch (error) {
      if (!isAlreadyEnded(error)) throw error;
    }
  }

  function cancelWithChildren(runId: string, reason: string | undefined): void {
    const cancelled = cancelRun(store, { runId, reason, now: now(), definition: definitionOf(runId) ?? undefined });
    live.publishLifecycle(cancelled);
    // A cancel that rolls back first: the run's execution ends it, and tells whom it ends as any end does.
    if (cancelled.type === "cancel_requested") {
      kick(runId);
      for (const child of activeChildrenOf(store.events(runId)))
        cancelIfActive(child, `Its parent run "${runId}" was cancelled`);
      return;
    }
    flowQueues.ended(runId);
    // Its sleep, retry or timeout timer has nothing left to wake; a step in flight finds the terminal event.
    scheduler.clearTimer(runId);
    settle(runId);
    tellParent(runId);
    tellWatchers(runId);
    for (const child of activeChildrenOf(store.events(runId)))
      cancelIfActive(child, `Its parent run "${runId}" was cancelled`);
  }

  /**
   * Re-enqueues the stuck runs this process is not driving (counted). With
   * `driveHealthy` (at start-up) it also drives the healthy ones (not
   * counted): a run that sleeps or waits with a timeout needs a timer in this
   * process, and a step another process holds needs one for its timeout.
   */
  function sweep(driveHealthy: boolean): number {
    return countUndrivenRuns((runId, definition, timerPending) => {
      // Children that ended while this process was not there to tell the parent.
      reconcileChildren(store, runId, now());
      reconcileAwaited(runId);
      const outcome = recoverRun(store, definition, { runId: runId, now: now(), executingHere: timerPending });
      for (const event of outcome.appended) noticeEvent(event);
      if (outcome.reenqueue || (driveHealthy && outcome.reason === null && !timerPending)) kick(runId);
      return outcome.reenqueue;
    });
  }

  /**
   * Runs `recover` on each active run this process is not driving and counts
   * those it answers true for; a failing run is logged and the rest go on.
   */
  function countUndrivenRuns(
    recover: (runId: string, definition: WorkflowDefinition, timerPending: boolean) => boolean,
  ): number {
    let count = 0;
    for (const runId of store.activeRunIds()) {
      // Runs this process executes are never stuck: their executor is on it (a timer may wake a stranded one late).
      if (scheduler.isRunning(runId)) continue;
      const definition = definitionOf(runId);
      if (!definition) continue;
      try {
        if (recover(runId, definition, scheduler.hasTimer(runId))) count++;
      } catch (error) {
        logError(`Recovery of workflow run ${runId} failed`, error);
      }
    }
    return count;
  }

  function recoverNow(): number {
    const reenqueued = sweep(false);
    log(`Re-enqueued ${reenqueued} workflow(s)`);
    deleteExpiredRuns();
    return reenqueued;
  }

  /** Retention: deletes finished runs whose `expiresAt` has passed; a cost that follows those alone. */
  function deleteExpiredRuns(): void {
    const expired = store.expiredRunIds(now(), EXPIRED_RUNS_PER_SWEEP);
    if (expired.length === 0) return;
    store.forgetRuns(expired);
    live.forgetRuns(expired);
    log(`Deleted ${expired.length} finished workflow run(s) past their retention`);
  }

  function rerun(runId: string, fromStep: string | undefined): CreatedRun & { name: string } {
    const started = startLocalRerun(store, definitions, {
      runId,
      fromStep,
      newRunId,
      now: now(),
      version: options.version,
    });
    kick(started.runId);
    return started;
  }

  /** A bulk operation acts on each run through what `cancel` and `rerun` do. */
  const bulkOperations = createLocalBulkOperations({
    store,
    controls: { cancel: cancelWithChildren, rerun: (runId, { fromStep }) => rerun(runId, fromStep) },
    newRunId,
    now,
    signal: stop.signal,
    logError,
  });

  function bulk(action: BulkAction, filter: RunFilter, what: string): Promise<BulkResult> {
    if (stop.signal.aborted) throw closedError();
    return bulkOperations.start(action, filter, what);
  }

  function recoverAtStartup(): number {
    flowQueues.rebuild();
    const interrupted = countUndrivenRuns((runId, definition, timerPending) => {
      if (timerPending) return false;
      const appended = failInterruptedStep(store, definition, runId, now());
      for (const event of appended) noticeEvent(event);
      return appended.length > 0;
    });
    const reenqueued = sweep(true);
    log(
      interrupted === 0
        ? `Re-enqueued ${reenqueued} workflow(s)`
        : `Re-enqueued ${reenqueued} workflow(s); ${interrupted} step(s) cut off by the previous process recorded as interrupted`,
    );
    for (const operation of store.unfinishedBulkOperations())
      void bulkOperations
        .carryOut(operation)
        .catch((error: unknown) => logError(`Bulk operation ${operation.id} stopped`, error));
    return reenqueued;
  }

  return {
    stream: live,
    kick,
    recoverNow,
    recoverAtStartup,

    async start(name, data, startOptions) {
      if (stop.signal.aborted) throw closedError();
      const definition = definitions(name);
      if (!definition) throw new PlatformError("unknown_workflow", `No workflow named "${name}" is registered`);
      const once = startOptions.once === true && startOptions.id !== undefined;
      const onceRunId = once ? uuidOf(await onceRunKey(startOptions.id!)) : undefined;
      const runIdOf = () => onceRunId ?? newRunId();
      const create = (
        runId: string,
        placement: { flowKey?: string; queued?: boolean; at?: number; rank?: QueueRank } = {},
      ) =>
        createRun(store, definition, data, {
          runId,
          workflowId: startOptions.id,
          now: placement.at ?? now(),
          once,
          ...(options.version === undefined ? {} : { version: options.version }),
          ...(placement.flowKey === undefined
            ? {}
            : { flowKey: placement.flowKey, queued: placement.queued, rank: placement.rank }),
          ...(startOptions.idempotency ? { idempotency: startOptions.idempotency } : {}),
        });
      if (definition.flow) return flowQueues.start(definition, data, runIdOf, create, startOptions.priority);
      const started = create(runIdOf());
      if (started.created) kick(started.runId);
      return started;
    },

    async get(runId) {
      const view = describeRun(store.events(runId));
      return view && flowQueues.explain(view);
    },

    async list(query) {
      return store.listRuns(toRunListQuery(query));
    },

    async send(runId, name, payload, callbackId) {
      if (stop.signal.aborted) throw closedError();
      if (callbackId === undefined) appendReceivedEvent(store, runId, { name, payload }, now());
      else appendCallbackEvent(store, runId, { name, payload, callbackId }, now());
      kick(runId);
    },

    async sendOrStart(workflowId, event, start) {
      if (stop.signal.aborted) throw closedError();
      const definition = definitions(start.name);
      if (!definition) throw new PlatformError("unknown_workflow", `No workflow named "${start.name}" is registered`);
      const run = sendOrStartRun(store, definition, {
        event,
        data: start.data,
        runOptions: {
          runId: newRunId(),
          workflowId,
          now: now(),
          ...(options.version === undefined ? {} : { version: options.version }),
        },
      });
      kick(run.runId);
      return run;
    },

    async cancel(runId, reason) {
      if (stop.signal.aborted) throw closedError();
      cancelWithChildren(runId, reason);
      return describeRun(store.events(runId)) as WorkflowRunView;
    },

    async pause(runId, reason) {
      if (stop.signal.aborted) throw closedError();
      pauseRun(store, runId, reason, now());
      // Nothing is due while paused; a step in flight commits and its execution stops before the next claim.
      scheduler.clearTimer(runId);
      return describeRun(store.events(runId)) as WorkflowRunView;
    },

    async resume(runId) {
      if (stop.signal.aborted) throw closedError();
      resumeRun(store, runId, now());
      kick(runId);
      return describeRun(store.events(runId)) as WorkflowRunView;
    },

    async rerun(runId, rerunOptions) {
      if (stop.signal.aborted) throw closedError();
      return rerun(runId, rerunOptions.fromStep);
    },

    async countRuns(filter) {
      return store.matchRunIds(filter, 0).matched;
    },

    cancelMany: async (filter, bulkOptions) =>
      bulk(
        { kind: "cancel", ...(bulkOptions.reason === undefined ? {} : { reason: bulkOptions.reason }) },
        filter,
        "workflow.cancelMany",
      ),

    rerunMany: async (filter, bulkOptions) =>
      bulk(
        { kind: "rerun", ...(bulkOptions.fromStep === undefined ? {} : { fromStep: bulkOptions.fromStep }) },
        filter,
        "workflow.rerunMany",
      ),

    async findStrandedRuns(workflows) {
      return findStrandedRuns(store, workflows);
    },

    readStream(runId, query) {
      const status = () => {
        const summary = store.getRun(runId);
        return summary ? (isLiveStatus(summary.status) ? "live" : "ended") : null;
      };
      return live.read(runId, query, status, stop.signal.aborted ? 0 : STREAM_WAIT_SLICE_MS);
    },

    waitForTerminal(runId) {
      const view = describeRun(store.events(runId));
      if (!view) return Promise.reject(new PlatformError("not_found", `Workflow run "${runId}" does not exist`));
      if (!isLiveStatus(view.status)) return Promise.resolve(view);
      if (stop.signal.aborted) return Promise.reject(closedError());
      return waiters.wait(runId);
    },

    async close() {
      stop.abort();
      flowQueues.close();
      // Timers go first, then the waiters are told, then the executions under way get their grace.
      const drained = scheduler.close(options.closeGraceMS ?? 5000);
      waiters.close(closedError);
      await drained;
    },
  };
}

/** A `once` run's id, shaped like the random ones: a version-8 UUID whose bits are the key's. */
function uuidOf(key: string): string {
  const variant = ((Number.parseInt(key[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${key.slice(0, 8)}-${key.slice(8, 12)}-8${key.slice(13, 16)}-${variant}${key.slice(17, 20)}-${key.slice(20, 32)}`;
}
