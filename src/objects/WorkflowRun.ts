import { DurableObject } from "cloudflare:workers";
import { PlatformError } from "../core/errors.ts";
import type { Clock } from "../engine/api/clock.ts";
import {
  activeChildrenOf,
  type ChildRunPort,
  type ChildStart,
  childFinishedOfOutcome,
  childDepthOf,
  childReportOf,
  createChildRun,
  createParentLog,
  isAlreadyEnded,
  type ParentLog,
  recordChildrenFinished,
} from "../engine/control/children.ts";
import type { AwaitedRun, ChildRef } from "../engine/execution/continuation.ts";
import { createRun, type CreatedRun } from "../engine/execution/createRun.ts";
import type { WorkflowDefinition } from "../engine/api/definition.ts";
import {
  awaitedRunOf,
  describeRun,
  outcomeOf,
  type RunOutcome,
  type WorkflowRunView,
} from "../engine/execution/describeRun.ts";
import { isTerminalEvent, type StoredEvent, type WorkflowEventPayloads } from "../engine/execution/events.ts";
import { type AwaitRunPort, executeRun, type ExecuteRunResult } from "../engine/execution/executeRun.ts";
import type { JsonValue } from "../engine/api/json.ts";
import { failInterruptedStep, recoverRun, type RecoveryReason } from "../engine/control/recovery.ts";
import { planRerun, type RerunPlan } from "../engine/control/rerun.ts";
import {
  appendCallbackEvent,
  appendReceivedEvent,
  cancelRun,
  deliverRunEnded,
  pauseRun,
  resumeRun,
  watchRunEnd,
} from "../engine/control/runControl.ts";
import { sendOrStartRun } from "../engine/control/sendOrStart.ts";
import { createSqlEventStore, type SqlEventStore, type SyncSql } from "../engine/storage/sqlEventStore.ts";
import { isActiveStatus, isLiveStatus, type RunReport, type RunStatus } from "../engine/storage/store.ts";
import { dequeueRun, replaceQueuedData } from "../engine/flow/queuedRuns.ts";
import {
  createLiveRunStream,
  type LiveRunStream,
  STREAM_WAIT_SLICE_MS,
  type StreamBatch,
} from "../engine/streams/liveRunStream.ts";
import { createLegacySqlRunStream } from "../engine/streams/legacySqlRunStream.ts";
import { createSqlRunStream } from "../engine/streams/sqlRunStream.ts";
import { streamPollDelayMS } from "../engine/streams/streamPolling.ts";
import { flowKeyActorOf, type FlowKeyEnv } from "./flowKeyClient.ts";
import type { RunStartInput } from "./WorkflowFlowKeyActor.ts";
import { getWorkflowDefinition, type StartedRun } from "../engine/api/workflowApi.ts";
import { actorClient, type ActorClient } from "./actorClient.ts";
import { durableObjectSql } from "./durableObjectSql.ts";
import { actorIdOfRun, childRunId } from "./runIds.ts";
import { runIndexOf, type RunIndexClient, type RunIndexEnv } from "./runIndexClient.ts";
import {
  decide,
  type DriveCause,
  type ReportedRun,
  type ExecuteAnswer,
  executeAnswer,
  IDLE_RUN,
  isIdle,
  type Decision,
  type RunActorEffect,
  type RunActorInput,
  type RunActorState,
} from "./runActorPolicy.ts";
import { workflowRunHost } from "./workflowRunHost.ts";
import { budgetedStart } from "./budgetedStart.ts";
import { meterActiveWork, meterAlarmRun, setAlarmMetered } from "./storageMeter.ts";

/**
 * The project worker's bindings as the run actor sees them: the run index,
 * the run actors themselves (a run's children and parent live in others),
 * and the rest handed on to its steps.
 */
export type WorkflowRunEnv = RunIndexEnv &
  Partial<FlowKeyEnv> & {
    WORKFLOW_RUNS: DurableObjectNamespace<WorkflowRunActor>;
    readonly [binding: string]: unknown;
  };

/** How many children a fanning-out step starts at once (each start is one call to the child's actor). */
const CHILD_STARTS_AT_ONCE = 100;

/** What `start` answers: the run, and for a child whose id another active run holds, why it did not start. */
export type StartAnswer = StartedRun & { summary?: RunReport; refused?: string };

function definitionNamed(name: string): WorkflowDefinition {
  const definition = getWorkflowDefinition(name);
  if (!definition)
    throw new PlatformError(
      "unknown_workflow",
      `No workflow named ${JSON.stringify(name)} is registered in this project's code.`,
    );
  return definition;
}

/** What `recover` found (null: not stuck) and whether it started an execution (false when the repair ended the run). */
export interface RunRecovery {
  reason: RecoveryReason | null;
  reenqueued: boolean;
}

/**
 * The actor for one workflow id (its name): its own SQLite `_workflow_events`
 * log, in which at most one run is active at a time. Step functions run here,
 * in a loop within one invocation (the first one within `start`); the single
 * alarm is spent only on what needs time to pass or must survive a crash: the
 * first execution should `start`'s not finish, retries after backoff, step
 * timeouts, and continuing in a fresh invocation after the 50-second step-loop
 * budget.
 *
 * What to do when is decided by runActorPolicy.ts (a pure function of what
 * this instance knows of a run and what just happened); this class feeds it,
 * applies its effects and follows its answers.
 */
export class WorkflowRunActor extends DurableObject<WorkflowRunEnv> {
  #sql: SyncSql;
  /** The runtime's clock when this instance was made: every time this actor reads or writes. */
  #now: Clock;
  #storeInstance: SqlEventStore | null = null;
  #streamInstance: LiveRunStream | null = null;
  /** What the policy knows of each run this instance has to remember something of. */
  #runs = new Map<string, RunActorState>();
  /** Executions under way (the policy's `executing`), for a drive to join. */
  #executions = new Map<string, Promise<ExecuteRunResult>>();
  /** Reports to the index in flight (the policy's `reported`), for a report of the same status to join. */
  #reports = new Map<string, Promise<void>>();
  /** `start` calls waiting for their run's first execution to first wait. */
  #startAnswers = new Map<string, () => void>();
  /** Runs whose `start` has not answered yet: settles when it has (a fan-out in the first step waits for it). */
  #startAnswered = new Map<string, Promise<void>>();
  #waiters = new Map<string, Set<(view: WorkflowRunView) => void>>();
  /** The parent run of each run this instance started or read (null: none), see #parentOf. */
  #parents = new Map<string, string | null>();
  /** What this instance read of the logs of parents whose children tell them they ended (see #recordChildren). */
  #parentLogs = new Map<string, ParentLog>();
  /** The project's run index actor, looked up once per instance. */
  #index: RunIndexClient | null = null;

  constructor(ctx: DurableObjectState, env: WorkflowRunEnv) {
    super(ctx, env);
    // Step functions run here: `workflow.start`, `email.send`, … need this environment too.
    workflowRunHost.useEnv(env);
    this.#now = workflowRunHost.clock;
    this.#sql = durableObjectSql(ctx.storage);
    this.#failInterruptedSteps();
  }

  /**
   * Fast crash recovery. A Durable Object is single-instance,
   * so an instance that is just starting has no execution of its own, and a
   * step_started at the end of its log belongs to an executor that died with
   * the previous instance (a crash, a deploy, a restart of `platform dev`).
   * That attempt is recorded at once as step_failed{reason "interrupted"}
   * (retryable), and the alarm, due now, drives the run on, instead of
   * waiting out `stepTimeoutMS`. Costs one read of the schema for an actor
   * that holds no run yet, and one of its active run otherwise.
   */
  #failInterruptedSteps(): void {
    const tables = this.#sql.all("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_workflow_runs'");
    if (tables.length === 0) return;
    const repaired: { runId: string; ended: boolean }[] = [];
    for (const runId of this.#store.activeRunIds()) {
      const definition = getWorkflowDefinition(this.#store.getRun(runId)?.name ?? "");
      if (!definition) continue;
      const appended = failInterruptedStep(this.#store, definition, runId, this.#now());
      const ended = appended.some(isTerminalEvent);
      if (appended.length > 0) repaired.push({ runId, ended });
      if (ended) this.#releaseFlowKey(runId);
    }
    if (repaired.length === 0) return;
    void this.ctx.blockConcurrencyWhile(async () => {
      for (const { runId, ended } of repaired)
        await this.#decideAndApply(runId, { type: "step_interrupted", ended, now: this.#now() });
    });
  }

  /**
   * The actor's log, its tables created on first use rather than in the
   * constructor (whose writes workerd commits on their own): a fresh actor's
   * schema is then committed with its first run in one write. The SQL handle
   * itself is taken in the constructor, in the actor's own context.
   */
  get #store(): SqlEventStore {
    this.#storeInstance ??= createSqlEventStore(this.#sql, { manyRuns: false, packRows: true });
    return this.#storeInstance;
  }

  /** The project version of the code this actor runs (`PLATFORM_VERSION`), recorded on the runs it starts. */
  /** The runs' streams: what steps publish, in a table of their own beside the log (made on the first publish), and the lifecycle read from the log. */
  get #stream(): LiveRunStream {
    this.#streamInstance ??= createLiveRunStream(
      createSqlRunStream(this.#sql),
      this.#store,
      createLegacySqlRunStream(this.#sql),
    );
    return this.#streamInstance;
  }

  /**
   * One batch of a run's stream. While an execution of the run is under way
   * here (the actor is awake and billed for it anyway) the read waits for the
   * next message; otherwise it answers at once, and the reader (the project
   * worker) asks again when streamPollDelayMS says: a reader never holds a
   * sleeping or waiting run's actor awake.
   */
  async readStream(runId: string, query: { from: number; topics?: string[] }): Promise<StreamBatch> {
    const status = () => {
      const summary = this.#store.getRun(runId);
      return summary ? (isLiveStatus(summary.status) ? "live" : "ended") : null;
    };
    const running = this.#executions.has(runId);
    const batch = await this.#stream.read(runId, query, status, running ? STREAM_WAIT_SLICE_MS : 0);
    if (batch.messages.length > 0 || batch.ended || running) return batch;
    const summary = this.#store.getRun(runId);
    if (!summary) return batch;
    return { ...batch, retryAfterMS: streamPollDelayMS(summary.status, this.#store.lastEvent(runId), this.#now()) };
  }

  get #version(): string | undefined {
    const version = this.env.PLATFORM_VERSION;
    return typeof version === "string" && version !== "" ? version : undefined;
  }

  /**
   * Creates the run and runs its first execution at once. A run that was
   * created answers with its summary as it stands after that first turn, for
   * the caller to put in the project's run index (durableObjectBackend.ts
   * `start`); from then on this actor reports the run's end
   * itself, and reports it as running again whenever a new instance drives it.
   */
  async start(
    input: RunStartInput & {
      /** A rerun's plan (from `planRerun` in the original's actor); `data` is then the plan's. */
      rerun?: RerunPlan;
      /** Start-or-send: the event goes to the active run here, or the new run is created with it (sendOrStart.ts). */
      event?: { name: string; payload: JsonValue };
    },
  ): Promise<StartAnswer> {
    const now = input.at ?? this.#now();
    const definition = definitionNamed(input.name);
    const version = this.#version;
    let run: CreatedRun;
    if (input.parentRunId === undefined) {
      const options = {
        runId: input.runId,
        workflowId: input.workflowId,
        now,
        ...(version === undefined ? {} : { version }),
        ...(input.rerun ? { rerun: input.rerun } : {}),
        once: input.once === true,
        ...(input.flowKey === undefined ? {} : { flowKey: input.flowKey, queued: input.queued === true }),
        ...(input.rank ? { rank: input.rank } : {}),
        ...(input.idempotency ? { idempotency: input.idempotency } : {}),
      };
      run = input.event
        ? sendOrStartRun(this.#store, definition, { event: input.event, data: input.data, runOptions: options })
        : createRun(this.#store, definition, input.data, options);
    } else {
      const child = createChildRun(this.#store, definition, { ...input, parentRunId: input.parentRunId }, now);
      if (child.ref.refused !== undefined)
        return { runId: child.ref.runId, workflowId: input.workflowId, created: false, refused: child.ref.refused };
      run = { runId: input.runId, workflowId: input.workflowId, created: child.created };
      // Started before (a retried step, a crash between start and commit): its outcome if it has ended, since
      // it told its parent then and the parent may not have recorded it; and its summary, since the parent's
      // index report of it may have failed (a run that ended within its start reports nothing itself).
      if (!run.created) return { ...run, ...this.#outcomeOf(run.runId), summary: this.#store.getReport(run.runId)! };
    }
    if (!run.created) {
      // The event went to the run already active here: it is driven as `send` drives one.
      if (input.event) await this.#decideAndApply(run.runId, { type: "event_sent", now: this.#now() });
      return run;
    }
    // Its key's queue starts it (dequeue).
    if (input.queued) return { ...run, summary: this.#store.getReport(run.runId)! };
    // The first execution starts here at once, in this same turn, whose writes workerd commits
    // together when it ends. A run whose steps finish without waiting on anything ends within it:
    // created, run and ended in one write, with no alarm ever set. Before the execution first waits
    // (a step's promise), it arms the alarm, due now, in that same turn: the run's safety net should
    // the actor die mid-step (workerd fires and retries it; that execution records the interruption
    // and carries on). While this instance lives, the alarm joins the execution under way.
    let ended: StoredEvent | null = null;
    let failedStep: StoredEvent | undefined;
    const firstWait = new Promise<void>((resolve) => this.#startAnswers.set(run.runId, resolve));
    this.#parents.set(run.runId, input.parentRunId ?? null);
    let answered = () => {};
    this.#startAnswered.set(run.runId, new Promise<void>((resolve) => (answered = resolve)));
    const execution = this.#startOrJoinExecution(run.runId, "start", (event) => {
      if (event.type === "step_failed") failedStep = event;
      else if (isTerminalEvent(event)) ended = event;
    });
    // Answer once the execution has stopped, or a turn after it first waited: steps that return
    // without a promise have all run by then within this turn, and async steps that need no I/O
    // within the turn after it (a run that ended answers with its outcome). An execution that threw
    // has armed its retry alarm (the policy's execution_threw): the caller learns of the run, not of that.
    const nextTurn = firstWait.then(() => new Promise((resolve) => setTimeout(resolve, 0)));
    await Promise.race([execution.then(ignoreOutcome, ignoreOutcome), nextTurn]);
    this.#startAnswers.delete(run.runId);
    this.#startAnswered.delete(run.runId);
    answered();
    const summary = this.#store.getReport(run.runId)!;
    this.#decide(run.runId, { type: "start_answered", run: reported(summary) });
    // A run that has ended answers with its outcome, so `result()` need not ask again.
    const outcome = ended && outcomeOf(ended, failedStep);
    return outcome ? { ...run, outcome, summary } : { ...run, summary };
  }

  /**
   * `/__workflow/:runId/execute`: runs the step loop now (or joins the one
   * running) and says whether the run is done, and whether
   * the caller should drive it again at once: only when the step-loop budget
   * ran out. A run waiting for time to pass (a retry's backoff, a step's
   * timeout) answers `{ done: false }`: its alarm wakes it, nobody need poll.
   */
  async execute(runId: string): Promise<ExecuteAnswer> {
    if (!this.#store.getRun(runId)) throw new PlatformError("not_found", `Workflow run "${runId}" does not exist.`);
    return executeAnswer(await this.#startOrJoinExecution(runId, "execute"));
  }

  /**
   * A child run of `parentRunId` (held here) has ended.
   * Recorded once in the parent's log; the parent is driven once its last
   * child has ended (as a send would: the alarm first, then the drive).
   */
  async childFinished(parentRunId: string, finished: WorkflowEventPayloads["child_finished"]): Promise<void> {
    const { allFinished } = this.#recordChildren(parentRunId, [finished]);
    if (allFinished) await this.#decideAndApply(parentRunId, { type: "event_sent", now: this.#now() });
  }

  get(runId: string): WorkflowRunView | null {
    return describeRun(this.#store.events(runId));
  }

  /**
   * A run in another actor waits for `runId` (held here) to end (`waitForRun`): how it ended, if it
   * has; else the waiter is recorded, and the run's end tells it (see #report).
   */
  watchRun(runId: string, waiterRunId: string): AwaitedRun | null {
    return watchRunEnd(this.#store, runId, waiterRunId);
  }

  /** A run that `waiterRunId` (held here) waits for has ended: recorded once, and the waiter driven on. */
  async runEnded(waiterRunId: string, ended: AwaitedRun): Promise<void> {
    if (deliverRunEnded(this.#store, waiterRunId, JSON.parse(JSON.stringify(ended)) as AwaitedRun, this.#now()))
      await this.#decideAndApply(waiterRunId, { type: "event_sent", now: this.#now() });
  }

  /** The run's status, for its flow key's queue; null for a run this actor does not hold. */
  status(runId: string): RunStatus | null {
    return this.#store.getRun(runId)?.status ?? null;
  }

  /**
   * Its flow key's queue starts the queued run (workflow_dequeued at `at`, the time
   * the queue decided) and it is driven as `send` drives a run. False when it is not queued (any more).
   */
  async dequeue(runId: string, at: number): Promise<boolean> {
    if (!dequeueRun(this.#store, runId, at)) return false;
    await this.#applyEffects(runId, [{ type: "report", detached: "recovery_sweep" }]);
    await this.#decideAndApply(runId, { type: "event_sent", now: this.#now() });
    return true;
  }

  /** A debounced start replaces the queued run's data; answers its workflow id, or null when it is not queued (any more). */
  replaceQueuedData(runId: string, data: JsonValue, at: number): string | null {
    return replaceQueuedData(this.#store, runId, data, at) ? (this.#store.getRun(runId)?.workflowId ?? null) : null;
  }

  /** Resolves with the run once it is terminal, or null after `maxWaitMS` (the caller asks again). */
  waitForTerminal(runId: string, maxWaitMS: number): Promise<WorkflowRunView | null> {
    const view = this.get(runId);
    if (!view) throw new PlatformError("not_found", `Workflow run "${runId}" does not exist.`);
    if (!isLiveStatus(view.status)) return Promise.resolve(view);
    return new Promise((resolve) => {
      const waiters = this.#waiters.get(runId) ?? new Set();
      this.#waiters.set(runId, waiters);
      const done = (finished: WorkflowRunView | null) => {
        clearTimeout(timer);
        waiters.delete(done);
        resolve(finished);
      };
      const timer = setTimeout(() => done(null), maxWaitMS);
      waiters.add(done);
    });
  }

  /** The recovery sweep's question: is this run stuck, and if so, repair it and (unless that ended it) drive it again. */
  async recover(runId: string): Promise<RunRecovery> {
    const summary = this.#store.getRun(runId);
    if (!summary) return { reason: null, reenqueued: false };
    const alarmAt = isActiveStatus(summary.status) ? await this.ctx.storage.getAlarm() : null;
    const decision = this.#decide(runId, { type: "recover", status: summary.status, alarmAt, now: this.#now() });
    const check = decision.answer;
    if (check?.type !== "recover_run") {
      await this.#applyEffects(runId, decision.effects);
      return { reason: null, reenqueued: false };
    }
    const outcome = recoverRun(this.#store, definitionNamed(summary.name), {
      runId,
      now: this.#now(),
      executingHere: check.executingHere,
    });
    for (const event of outcome.appended) this.#stream.publishLifecycle(event);
    const ended = outcome.appended.some(isTerminalEvent);
    if (ended) this.#releaseFlowKey(runId);
    const recovered: RunActorInput = {
      type: "recovered",
      reason: outcome.reason,
      reenqueue: outcome.reenqueue,
      ended,
      alarmPending: check.alarmPending,
      now: this.#now(),
    };
    await this.#decideAndApply(runId, recovered);
    return { reason: outcome.reason, reenqueued: outcome.reenqueue };
  }

  /**
   * `workflow.send`. Appends event_received and drives the
   * run (a run that waits for that event goes on at once). The alarm, due
   * now, is the safety net should this instance die first, as in `start`.
   * With `callbackId` (a callback URL's POST) the event spends it, here in
   * the run's own log: a replay is `conflict`, after a restart too.
   */
  async send(runId: string, name: string, payload: JsonValue, callbackId?: string): Promise<void> {
    if (callbackId === undefined) appendReceivedEvent(this.#store, runId, { name, payload }, this.#now());
    else appendCallbackEvent(this.#store, runId, { name, payload, callbackId }, this.#now());
    await this.#decideAndApply(runId, { type: "event_sent", now: this.#now() });
  }

  /**
   * `workflow.cancel`. Appends the terminal
   * workflow_cancelled; a step in flight here finds its seq taken and its
   * result is dropped. The alarm was this run's (one active run per actor).
   * With `rollbackOnCancel`, cancel_requested instead, and the run is driven
   * through its rollbacks to workflow_cancelled.
   */
  async cancel(runId: string, reason: string | undefined): Promise<WorkflowRunView> {
    const definition = getWorkflowDefinition(this.#store.getRun(runId)?.name ?? "");
    const cancelled = cancelRun(this.#store, { runId, reason, now: this.#now(), definition });
    this.#stream.publishLifecycle(cancelled);
    if (cancelled.type === "cancel_requested") {
      // It rolls back first: driven like a run sent an event; its execution appends workflow_cancelled.
      await this.#decideAndApply(runId, { type: "event_sent", now: this.#now() });
    } else {
      this.#releaseFlowKey(runId);
      await this.#decideAndApply(runId, { type: "cancelled" });
    }
    // Its children that are still running end with it (theirs with them).
    await this.#children.cancel(activeChildrenOf(this.#store.events(runId)), `Its parent run "${runId}" was cancelled`);
    return this.get(runId) as WorkflowRunView;
  }

  /**
   * The parent of a run here (null: it has none), known from `start` or read
   * once per instance from its workflow_created: a run started here that is
   * no child costs no read of its log when it ends.
   */
  #parentOf(runId: string): string | null {
    let parent = this.#parents.get(runId);
    if (parent === undefined) {
      const created = this.#store.createdEvent(runId);
      parent = created?.type === "workflow_created" ? (created.payload.parent_run_id ?? null) : null;
      this.#parents.set(runId, parent);
    }
    return parent;
  }

  /** How a run here ended (for a `start` that finds it started before); empty while it is active. */
  #outcomeOf(runId: string): { outcome?: RunOutcome } {
    const events = this.#store.events(runId);
    const last = events[events.length - 1];
    const outcome =
      last &&
      outcomeOf(
        last,
        events.findLast((event) => event.type === "step_failed"),
      );
    return outcome ? { outcome } : {};
  }

  /**
   * Records children's ends in a parent's log, reading on from what this
   * instance read of it before (each event once, however many children of a
   * fan-out tell it); forgotten once the parent stops waiting for them.
   */
  #recordChildren(
    parentRunId: string,
    ended: readonly WorkflowEventPayloads["child_finished"][],
  ): { allFinished: boolean } {
    const log = this.#parentLogs.get(parentRunId) ?? createParentLog();
    const recorded = recordChildrenFinished(this.#store, { parentRunId, finished: ended, now: this.#now(), log });
    // Kept while the parent waits for more of them.
    if (log.last && !isTerminalEvent(log.last) && !recorded.allFinished) this.#parentLogs.set(parentRunId, log);
    else this.#parentLogs.delete(parentRunId);
    return recorded;
  }

  /** The actor holding a run, from its id; null for an id no actor here holds. */
  #actorOfRun(runId: string): ActorClient<WorkflowRunActor> | null {
    const actorId = actorIdOfRun(this.env.WORKFLOW_RUNS, runId);
    return actorId ? actorClient<WorkflowRunActor>(this.env.WORKFLOW_RUNS.get(actorId)) : null;
  }

  /**
   * How a step of a run here starts children: each in its own actor (named
   * by the child's workflow id), with a run id derived from its key, so a
   * start repeated after a crash or a retry names the same run. The runs
   * started are put in the project's index in one call; a child that ended
   * within its start (or before, when started earlier) is recorded here at
   * once, since its own actor reports nothing before its start answers.
   */
  readonly #children: ChildRunPort = {
    start: async (parentRunId, requests) => {
      for (const child of requests) definitionNamed(child.workflow);
      // Here, not in the step: the depth travels in each child's workflow_created, from parent to child.
      const childDepth = childDepthOf(this.#store, parentRunId);
      // `workflow.start` of the parent answers first (its answer waits a turn after the first wait, and workerd
      // holds this actor's timers while its calls to the children are under way).
      await this.#startAnswered.get(parentRunId);
      const namespace = this.env.WORKFLOW_RUNS;
      const runIds = await Promise.all(
        requests.map((child) => childRunId(namespace.idFromName(child.workflowId), child.key)),
      );
      // The whole fan-out under the account's live-run budget: past it, the step fails and no child starts.
      const answers = await budgetedStart(
        workflowRunHost.liveRuns(this.env),
        runIds,
        async () => {
          const started: StartAnswer[] = [];
          for (let from = 0; from < requests.length; from += CHILD_STARTS_AT_ONCE)
            started.push(
              ...(await Promise.all(
                requests
                  .slice(from, from + CHILD_STARTS_AT_ONCE)
                  .map((child, i) => this.#startChild(parentRunId, child, runIds[from + i]!, childDepth)),
              )),
            );
          return started;
        },
        async (runId) => (await this.#actorOfRun(runId)?.status(runId)) != null,
      );
      const summaries = answers.flatMap((answer) => (answer.summary ? [answer.summary] : []));
      this.#index ??= runIndexOf(this.env);
      if (summaries.length > 0) await this.#index.record(summaries);
      const ended = answers.flatMap((answer, index) =>
        answer.outcome && answer.refused === undefined
          ? [childFinishedOfOutcome(answer.runId, (requests[index] as ChildStart).workflow, answer.outcome)]
          : [],
      );
      if (ended.length > 0) this.#recordChildren(parentRunId, ended);
      return answers.map((answer, index): ChildRef => {
        const workflow = (requests[index] as ChildStart).workflow;
        return answer.refused === undefined
          ? { runId: answer.runId, workflow }
          : { runId: answer.runId, workflow, refused: answer.refused };
      });
    },
    cancel: async (runIds, reason) => {
      await Promise.all(
        runIds.map((runId) =>
          this.#actorOfRun(runId)
            ?.cancel(runId, reason)
            .catch((error: unknown) => {
              if (!isAlreadyEnded(error)) throw error;
            }),
        ),
      );
    },
  };

  /** How a step of a run here waits for another run: recorded with that run, in its own actor, which tells it of the end. */
  readonly #awaitRun: AwaitRunPort = {
    watch: async (waiterRunId, awaitedRunId) => {
      const actor = this.#actorOfRun(awaitedRunId);
      if (!actor) throw new PlatformError("not_found", `Workflow run "${awaitedRunId}" does not exist`);
      const ended = await actor.watchRun(awaitedRunId, waiterRunId);
      // As plain JSON: what an RPC answers carries the runtime's own symbol keys, which a step's result may not.
      return ended && (JSON.parse(JSON.stringify(ended)) as AwaitedRun);
    },
  };

  async #startChild(parentRunId: string, child: ChildStart, runId: string, childDepth: number): Promise<StartAnswer> {
    const namespace = this.env.WORKFLOW_RUNS;
    return actorClient<WorkflowRunActor>(namespace.get(namespace.idFromName(child.workflowId))).start({
      runId,
      workflowId: child.workflowId,
      name: child.workflow,
      data: child.data,
      parentRunId,
      childDepth,
    });
  }

  /**
   * `workflow.pause`. Appends workflow_paused: an execution
   * under way commits the step in flight and ends before its next claim; an
   * alarm that fires meanwhile finds the run paused and arms nothing.
   */
  async pause(runId: string, reason: string | undefined): Promise<WorkflowRunView> {
    pauseRun(this.#store, runId, reason, this.#now());
    await this.#decideAndApply(runId, { type: "paused" });
    return this.get(runId) as WorkflowRunView;
  }

  /** `workflow.resume`. Appends workflow_resumed and drives the run (what fell due meanwhile, at once). */
  async resume(runId: string): Promise<WorkflowRunView> {
    resumeRun(this.#store, runId, this.#now());
    await this.#decideAndApply(runId, { type: "resumed", now: this.#now() });
    return this.get(runId) as WorkflowRunView;
  }

  /**
   * `workflow.rerun`'s first half, here where the original's
   * log is: what the rerun starts with, its workflow's name, and the
   * original's workflow id when it was given one (the rerun keeps it).
   */
  planRerun(runId: string, fromStep: string | undefined): RerunPlan & { name: string; workflowId?: string } {
    const events = this.#store.events(runId);
    const created = events[0];
    if (created?.type !== "workflow_created")
      throw new PlatformError("not_found", `Workflow run "${runId}" does not exist.`);
    const definition = definitionNamed(created.payload.workflowName);
    const plan = { ...planRerun(events, definition, fromStep), name: definition.name };
    return created.workflowId === runId ? plan : { ...plan, workflowId: created.workflowId };
  }

  /**
   * Retention: deletes a finished run's events and row;
   * once the actor holds no run at all, all of its storage (and its alarm).
   * Answers whether there was such a run. A live run is refused (`conflict`).
   */
  async forget(runId: string): Promise<boolean> {
    const summary = this.#store.getRun(runId);
    if (!summary) return false;
    if (isLiveStatus(summary.status))
      throw new PlatformError(
        "conflict",
        `Workflow run "${runId}" is ${summary.status}; only a finished run is deleted`,
      );
    this.#store.forgetRuns([runId]);
    this.#stream.forgetRuns([runId]);
    this.#runs.delete(runId);
    if (this.#sql.all("SELECT 1 FROM _workflow_runs LIMIT 1").length === 0) {
      await this.ctx.storage.deleteAlarm();
      await this.ctx.storage.deleteAll();
      this.#storeInstance = null;
      this.#streamInstance = null;
    }
    return true;
  }

  override async alarm(): Promise<void> {
    meterAlarmRun();
    await Promise.all(this.#store.activeRunIds().map((runId) => this.#startOrJoinExecution(runId, "alarm")));
  }

  /** Feeds the policy what happened to a run; keeps its next state and returns its effects and its answer. */
  #decide(runId: string, input: RunActorInput): Pick<Decision, "effects" | "answer"> {
    const before = this.#runs.get(runId) ?? IDLE_RUN;
    const { state, effects, answer } = decide(before, input);
    if (state !== before) {
      if (isIdle(state)) this.#runs.delete(runId);
      else this.#runs.set(runId, state);
    }
    return { effects, answer };
  }

  /** For inputs the policy answers nothing to (no step loop, report or recovery to follow): applies its effects. */
  #decideAndApply(runId: string, input: RunActorInput): Promise<void> | undefined {
    return this.#applyEffects(runId, this.#decide(runId, input).effects);
  }

  /**
   * Applies `effects` in order: synchronous ones at once (in the caller's
   * synchronous stretch), each asynchronous one awaited before the next,
   * unless it is detached: then it is started and its failure left to what
   * the policy says covers it. Answers undefined when nothing was awaited.
   */
  #applyEffects(runId: string, effects: readonly RunActorEffect[]): Promise<void> | undefined {
    for (let i = 0; i < effects.length; i++) {
      const effect = effects[i]!;
      const pending = this.#applyEffect(runId, effect);
      if (!pending) continue;
      // Covered by what effect.detached names (the recovery sweep, the retry alarm, the actor's reset).
      if ("detached" in effect && effect.detached) pending.catch(() => {});
      else return pending.then(() => this.#applyEffects(runId, effects.slice(i + 1)));
    }
    return undefined;
  }

  /** One effect: the alarm, the index, waiters, `start`'s answer, or an execution. */
  #applyEffect(runId: string, effect: RunActorEffect): Promise<unknown> | undefined {
    switch (effect.type) {
      case "set_alarm":
        return setAlarmMetered(this.ctx.storage, effect.at);
      case "delete_alarm":
        return this.ctx.storage.deleteAlarm();
      case "report":
        return this.#report(runId);
      case "wake_waiters":
        this.#wake(runId);
        return undefined;
      case "answer_start":
        this.#startAnswers.get(runId)?.();
        return undefined;
      case "drive":
        return this.#startOrJoinExecution(runId, effect.by);
    }
  }

  /**
   * Drives a run: joins its execution under way, or starts one, as the policy
   * answers. `observe` sees every event a new execution appends (`start`
   * learns the run's end from it).
   */
  #startOrJoinExecution(
    runId: string,
    by: DriveCause,
    observe?: (event: StoredEvent) => void,
  ): Promise<ExecuteRunResult> {
    const decision = this.#decide(runId, { type: "drive", by });
    const running = this.#executions.get(runId);
    if (decision.answer?.type === "join_execution" && running) return running;
    const execution = this.#runExecution(runId, decision, observe);
    this.#executions.set(runId, execution);
    // Billed as duration even after the request that started it answered (a step awaiting I/O).
    meterActiveWork(this.ctx.id, execution);
    return execution;
  }

  /** One execution: as many passes of the step loop as the policy answers `run_step_loop`, each after its effects. */
  async #runExecution(
    runId: string,
    first: Pick<Decision, "effects" | "answer">,
    observe: ((event: StoredEvent) => void) | undefined,
  ): Promise<ExecuteRunResult> {
    try {
      let decision = first;
      let result: ExecuteRunResult | undefined;
      while (decision.answer?.type === "run_step_loop") {
        // Awaited only when there is something to wait for: a run's first execution starts in `start`'s own stretch.
        const before = this.#applyEffects(runId, decision.effects);
        if (before) await before;
        const summary = this.#store.getRun(runId)!;
        result = await executeRun(this.#store, definitionNamed(summary.name), runId, {
          now: this.#now,
          // One execution per run in this single-threaded instance; a stretch's writes commit together anyway.
          exclusive: true,
          children: this.#children,
          awaitRun: this.#awaitRun,
          beforeWaiting: () => void this.#decideAndApply(runId, { type: "execution_waits", now: this.#now() }),
          stream: this.#stream,
          onEvent: (event) => {
            this.#stream.publishLifecycle(event);
            observe?.(event);
            if (!isTerminalEvent(event)) return;
            this.#releaseFlowKey(runId);
            this.#decideAndApply(runId, { type: "terminal_appended" });
          },
        });
        decision = this.#decide(runId, { type: "loop_ended", result, now: this.#now() });
      }
      await this.#applyEffects(runId, decision.effects);
      if (!result) throw new PlatformError("internal", `An execution of run "${runId}" never ran its step loop`);
      return result;
    } catch (error) {
      await this.#decideAndApply(runId, { type: "execution_threw", now: this.#now() });
      throw error;
    } finally {
      this.#executions.delete(runId);
      this.#decideAndApply(runId, { type: "execution_settled" });
    }
  }

  /**
   * Tells the run's flow key (if it has one) that the run ended, so the next queued
   * run starts. Not awaited: should it be lost, the key's reconcile alarm finds the run ended.
   */
  #releaseFlowKey(runId: string): void {
    const created = this.#store.createdEvent(runId);
    const keys = this.env.WORKFLOW_FLOW_KEYS;
    if (created?.type !== "workflow_created" || created.payload.flow_key === undefined || !keys) return;
    this.ctx.waitUntil(
      flowKeyActorOf({ WORKFLOW_FLOW_KEYS: keys }, created.payload.workflowName, created.payload.flow_key)
        .ended(runId)
        .catch((error: unknown) =>
          console.error(`workflow run ${runId}: its flow key did not hear that it ended:`, error),
        ),
    );
  }

  #wake(runId: string): void {
    const waiters = this.#waiters.get(runId);
    const view = waiters?.size ? this.get(runId) : null;
    if (!waiters || !view) return;
    for (const waiter of [...waiters]) waiter(view);
    this.#waiters.delete(runId);
  }

  /**
   * Keeps the project's run index in step after `start` (whose caller indexes
   * the run as it stood then), as the policy decides: a report that would
   * not change the index is skipped or joins the same report in flight (it
   * would cost an RPC to the project's one index actor at every execution and
   * for every active run at every recovery sweep). The index never takes a
   * terminal run back to running, so reports may arrive in any order.
   */
  #report(runId: string): Promise<void> | undefined {
    const summary = this.#store.getReport(runId);
    if (!summary) return undefined;
    const { answer } = this.#decide(runId, { type: "report", run: reported(summary) });
    if (answer?.type === "join_report") return this.#reports.get(runId);
    if (answer?.type !== "send_report") return undefined;
    this.#index ??= runIndexOf(this.env);
    const index = this.#index;
    const settled = (ok: boolean) => {
      if (this.#reports.get(runId) === done) this.#reports.delete(runId);
      this.#decide(runId, { type: "report_settled", run: answer.run, ok });
    };
    // A child that ended tells its parent first: should that fail, the index still lists it as running, and the
    // recovery sweep's `recover` reports it (and tells the parent) again.
    const parent =
      isLiveStatus(summary.status) || this.#parentOf(runId) === null ? null : childReportOf(this.#store.events(runId));
    const told = parent
      ? this.#actorOfRun(parent.parentRunId)?.childFinished(parent.parentRunId, parent.finished)
      : undefined;
    // So do the runs waiting for it (waitForRun), on the same terms.
    const watchers = isLiveStatus(summary.status) ? [] : this.#store.runWatchers(runId);
    const ended = watchers.length > 0 ? awaitedRunOf(this.get(runId)!) : null;
    const toldWatchers = ended
      ? Promise.all(watchers.map((watcher) => this.#actorOfRun(watcher)?.runEnded(watcher, ended)))
      : undefined;
    const done: Promise<void> = Promise.all([told, toldWatchers])
      .then(() => index.record([summary]))
      .then(
        () => settled(true),
        (error: unknown) => {
          settled(false);
          throw error;
        },
      );
    this.#reports.set(runId, done);
    return done;
  }
}

/** For `start`'s answer, which waits for its execution whether it ended or threw. */
function ignoreOutcome(): void {}

function reported(summary: RunReport): ReportedRun {
  return { status: summary.status, step: summary.step };
}
