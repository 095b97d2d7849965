import { PlatformError } from "../core/errors.ts";
import { systemClock, type Clock } from "./clock.ts";
import type { WorkflowDefinition } from "./definition.ts";
import { describeRun, type WorkflowRunView } from "./describeRun.ts";
import { isTerminalEvent, type StoredEvent } from "./events.ts";
import { createRun, onceRunKey } from "./createRun.ts";
import { executeRun } from "./executeRun.ts";
import { failInterruptedStep, recoverRun } from "./recovery.ts";
import { appendReceivedEvent, cancelRun } from "./runControl.ts";
import { createLocalFlowQueues } from "./localFlowQueues.ts";
import { isActiveStatus, toRunListQuery, type WorkflowEventStore, type RunIndex } from "./store.ts";
import { getWorkflowDefinition, RESULT_POLL_INTERVAL_MS, type WorkflowBackend } from "./workflowApi.ts";

export interface LocalWorkflowBackendOptions {
  store: WorkflowEventStore & RunIndex;
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
}

export interface LocalWorkflowBackend extends WorkflowBackend {
  waitForTerminal(runId: string): Promise<WorkflowRunView>;
  /** Starts (or continues) executing a run on the next tick. */
  kick(runId: string): void;
  /** One recovery sweep over the active runs this process is not driving; logs and returns how many were re-enqueued. */
  recoverNow(): number;
  /**
   * The sweep of a process that has just opened a store another process wrote
   * (beyond the spec): every step in flight there lost its executor with that
   * process, so it is recorded at once as step_failed{reason "interrupted"}
   * (retryable) rather than after its timeout; then the usual sweep. Logs one
   * line counting both; returns how many runs were re-enqueued.
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

interface Waiter {
  resolve(view: WorkflowRunView): void;
  reject(error: unknown): void;
}

/**
 * The engine in one process with no queue (spec: local development). A
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

  const running = new Map<string, Promise<void>>();
  const kickedWhileRunning = new Set<string>();
  const timers = new Map<string, ReturnType<typeof setTimeout>>();
  const waiters = new Map<string, Set<Waiter>>();
  const pollers = new Map<string, ReturnType<typeof setInterval>>();
  const reportedMissing = new Set<string>();
  const stop = new AbortController();
  const flowQueues = createLocalFlowQueues({ store, definitions, now, started: (runId) => kick(runId) });

  const closedError = () => new PlatformError("not_ready", "The workflow backend was closed");

  function schedule(runId: string, delayMS: number): void {
    if (stop.signal.aborted) return;
    const pending = timers.get(runId);
    if (pending !== undefined) clearTimeout(pending);
    timers.set(
      runId,
      setTimeout(
        () => {
          timers.delete(runId);
          drive(runId);
        },
        Math.max(0, delayMS),
      ),
    );
  }

  function kick(runId: string): void {
    if (stop.signal.aborted) return;
    if (running.has(runId)) kickedWhileRunning.add(runId);
    else schedule(runId, 0);
  }

  function drive(runId: string): void {
    if (stop.signal.aborted) return;
    if (running.has(runId)) {
      kickedWhileRunning.add(runId);
      return;
    }
    const execution = executeOnce(runId).finally(() => {
      running.delete(runId);
      if (kickedWhileRunning.delete(runId)) schedule(runId, 0);
    });
    running.set(runId, execution);
  }

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

  async function executeOnce(runId: string): Promise<void> {
    const definition = definitionOf(runId);
    if (!definition) return;
    try {
      const result = await executeRun(store, definition, runId, {
        now,
        budgetMS: options.budgetMS,
        signal: stop.signal,
        onEvent: noticeEvent,
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
        // Waiting for an event without a timeout: `send` kicks the run.
        case "idle":
        case "stopped":
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
    if (!isTerminalEvent(event)) return;
    flowQueues.ended(event.runId);
    settle(event.runId);
  }

  function settle(runId: string): void {
    const pending = waiters.get(runId);
    if (!pending) return;
    const view = describeRun(store.events(runId));
    if (!view || isActiveStatus(view.status)) return;
    waiters.delete(runId);
    const poller = pollers.get(runId);
    if (poller !== undefined) clearInterval(poller);
    pollers.delete(runId);
    for (const waiter of pending) waiter.resolve(view);
  }

  /**
   * Re-enqueues the stuck runs this process is not driving (counted). With
   * `driveHealthy` (at start-up) it also drives the healthy ones (not
   * counted): a run that sleeps or waits with a timeout needs a timer in this
   * process, and a step another process holds needs one for its timeout.
   */
  function sweep(driveHealthy: boolean): number {
    return countUndrivenRuns((runId, definition) => {
      const outcome = recoverRun(store, definition, runId, now(), { executingHere: false });
      for (const event of outcome.appended) noticeEvent(event);
      if (outcome.reenqueue || (driveHealthy && outcome.reason === null)) kick(runId);
      return outcome.reenqueue;
    });
  }

  /**
   * Runs `recover` on each active run this process is not driving and counts
   * those it answers true for; a failing run is logged and the rest go on.
   */
  function countUndrivenRuns(recover: (runId: string, definition: WorkflowDefinition) => boolean): number {
    let count = 0;
    for (const runId of store.activeRunIds()) {
      // Runs this process drives are never stuck: their executor or timer is on it.
      if (running.has(runId) || timers.has(runId)) continue;
      const definition = definitionOf(runId);
      if (!definition) continue;
      try {
        if (recover(runId, definition)) count++;
      } catch (error) {
        logError(`Recovery of workflow run ${runId} failed`, error);
      }
    }
    return count;
  }

  function recoverNow(): number {
    const reenqueued = sweep(false);
    log(`Re-enqueued ${reenqueued} workflow(s)`);
    return reenqueued;
  }

  function recoverAtStartup(): number {
    flowQueues.rebuild();
    const interrupted = countUndrivenRuns((runId, definition) => {
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
    return reenqueued;
  }

  return {
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
      const create = (runId: string, placement: { flowKey?: string; queued?: boolean; at?: number } = {}) =>
        createRun(store, definition, data, {
          runId,
          workflowId: startOptions.id,
          now: placement.at ?? now(),
          once,
          ...(placement.flowKey === undefined ? {} : { flowKey: placement.flowKey, queued: placement.queued }),
          ...(startOptions.idempotency ? { idempotency: startOptions.idempotency } : {}),
        });
      if (definition.flow) return flowQueues.start(definition, data, runIdOf, create);
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

    async send(runId, name, payload) {
      if (stop.signal.aborted) throw closedError();
      appendReceivedEvent(store, runId, name, payload, now());
      kick(runId);
    },

    async cancel(runId, reason) {
      if (stop.signal.aborted) throw closedError();
      cancelRun(store, runId, reason, now());
      flowQueues.ended(runId);
      // Its sleep, retry or timeout timer has nothing left to wake; a step in flight finds the terminal event.
      const pending = timers.get(runId);
      if (pending !== undefined) clearTimeout(pending);
      timers.delete(runId);
      settle(runId);
      return describeRun(store.events(runId)) as WorkflowRunView;
    },

    waitForTerminal(runId) {
      const view = describeRun(store.events(runId));
      if (!view) return Promise.reject(new PlatformError("not_found", `Workflow run "${runId}" does not exist`));
      if (!isActiveStatus(view.status)) return Promise.resolve(view);
      if (stop.signal.aborted) return Promise.reject(closedError());
      return new Promise<WorkflowRunView>((resolve, reject) => {
        const set = waiters.get(runId) ?? new Set<Waiter>();
        set.add({ resolve, reject });
        waiters.set(runId, set);
        // Another process sharing the store may finish the run; look every second as the spec's poller does.
        if (!pollers.has(runId))
          pollers.set(
            runId,
            setInterval(() => settle(runId), RESULT_POLL_INTERVAL_MS),
          );
      });
    },

    async close() {
      stop.abort();
      flowQueues.close();
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      for (const poller of pollers.values()) clearInterval(poller);
      pollers.clear();
      for (const [, pending] of waiters) for (const waiter of pending) waiter.reject(closedError());
      waiters.clear();
      let grace: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.allSettled([...running.values()]),
        new Promise((resolve) => {
          grace = setTimeout(resolve, options.closeGraceMS ?? 5000);
        }),
      ]);
      if (grace !== undefined) clearTimeout(grace);
    },
  };
}

/** A `once` run's id, shaped like the random ones: a version-8 UUID whose bits are the key's. */
function uuidOf(key: string): string {
  const variant = ((Number.parseInt(key[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${key.slice(0, 8)}-${key.slice(8, 12)}-8${key.slice(13, 16)}-${variant}${key.slice(17, 20)}-${key.slice(20, 32)}`;
}
