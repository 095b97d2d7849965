import { DurableObject } from "cloudflare:workers";
import { PlatformError } from "../core/errors.ts";
import type { Clock } from "../engine/clock.ts";
import { createRun } from "../engine/createRun.ts";
import type { WorkflowDefinition } from "../engine/definition.ts";
import { describeRun, outcomeOf, type WorkflowRunView } from "../engine/describeRun.ts";
import { isTerminalEvent, type StoredEvent } from "../engine/events.ts";
import { executeRun, type ExecuteRunResult } from "../engine/executeRun.ts";
import type { JsonValue } from "../engine/json.ts";
import { failInterruptedStep, recoverRun, type RecoveryReason } from "../engine/recovery.ts";
import { appendReceivedEvent, cancelRun } from "../engine/runControl.ts";
import { createSqlEventStore, type SyncSql } from "../engine/sqlEventStore.ts";
import type { RunIndex, RunStatus, RunSummary, WorkflowEventStore } from "../engine/store.ts";
import { getWorkflowDefinition, type StartedRun } from "../engine/workflowApi.ts";
import { durableObjectSql } from "./durableObjectSql.ts";
import { runIndexOf, type RunIndexClient, type RunIndexEnv } from "./runIndexClient.ts";
import { workflowRunHost } from "./workflowRunHost.ts";

/** The project worker's bindings as the run actor sees them: the run index, and the rest handed on to its steps. */
export type WorkflowRunEnv = RunIndexEnv & { readonly [binding: string]: unknown };

/** How soon an execution that threw (an engine or storage error, not a step failure) is tried again. */
const FAILED_EXECUTION_RETRY_MS = 5_000;

/** An alarm this far past its time is treated as lost rather than pending. */
const STALE_ALARM_MS = 60_000;

function definitionNamed(name: string): WorkflowDefinition {
  const definition = getWorkflowDefinition(name);
  if (!definition)
    throw new PlatformError(
      "unknown_workflow",
      `No workflow named ${JSON.stringify(name)} is registered in this project's code.`,
    );
  return definition;
}

/** What `/__workflow/:runId/execute` answers: the spec's `done`; `continue` (beyond the spec) when the budget ran out. */
export type ExecuteAnswer = { done: true } | { done: false; continue?: true };

/** What `recover` found (null: not stuck) and whether it started an execution (false when the repair ended the run). */
export interface RunRecovery {
  reason: RecoveryReason | null;
  reenqueued: boolean;
}

/** When the actor must look at a run again, from what its last execution reported. */
function wakeTimeAfter(result: ExecuteRunResult, now: number): number | null {
  switch (result.status) {
    case "waiting":
      return result.wakeAt;
    case "in_flight":
      return result.timeoutAt;
    case "budget_exhausted":
      return now;
    case "terminal":
    case "idle":
    case "stopped":
      return null;
  }
}

/**
 * The actor for one workflow id (its name): its own SQLite `_workflow_events`
 * log, in which at most one run is active at a time. Step functions run here,
 * in a loop within one invocation (the first one within `start`); the single
 * alarm is spent only on what needs time to pass or must survive a crash: the
 * first execution should `start`'s not finish, retries after backoff, step
 * timeouts, and continuing in a fresh invocation after the 50-second step-loop
 * budget.
 */
export class WorkflowRunActor extends DurableObject<WorkflowRunEnv> {
  #sql: SyncSql;
  /** The runtime's clock when this instance was made: every time this actor reads or writes. */
  #now: Clock;
  #storeInstance: (WorkflowEventStore & RunIndex) | null = null;
  /** Executions under way in this instance; a run is never driven twice at once here. */
  #executions = new Map<string, Promise<ExecuteRunResult>>();
  #waiters = new Map<string, Set<(view: WorkflowRunView) => void>>();
  /** The project's run index actor, looked up once per instance. */
  #index: RunIndexClient | null = null;
  /** The status this instance last sent to the run index per run, with that report (in flight or done). */
  #reports = new Map<string, { status: RunStatus; done: Promise<void> }>();
  /** Runs whose `start` has not answered yet: the caller indexes them from that answer. */
  #startsUnanswered = new Set<string>();
  /** Runs sent an event while their execution was under way: that execution reads the log again before it ends. */
  #again = new Set<string>();

  constructor(ctx: DurableObjectState, env: WorkflowRunEnv) {
    super(ctx, env);
    // Step functions run here: `workflow.start`, `email.send`, … need this environment too.
    workflowRunHost.useEnv(env);
    this.#now = workflowRunHost.clock;
    this.#sql = durableObjectSql(ctx.storage);
    this.#failInterruptedSteps();
  }

  /**
   * Beyond the spec: fast crash recovery. A Durable Object is single-instance,
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
      if (appended.length > 0) repaired.push({ runId, ended: appended.some(isTerminalEvent) });
    }
    if (repaired.length === 0) return;
    void this.ctx.blockConcurrencyWhile(async () => {
      for (const { runId, ended } of repaired) {
        // A run the interruption ended (its last attempt) is reported; the sweep reports it again should this fail.
        if (ended) this.#report(runId).catch(() => {});
        else await this.ctx.storage.setAlarm(this.#now());
      }
    });
  }

  /**
   * The actor's log, its tables created on first use rather than in the
   * constructor (whose writes workerd commits on their own): a fresh actor's
   * schema is then committed with its first run in one write. The SQL handle
   * itself is taken in the constructor, in the actor's own context.
   */
  get #store(): WorkflowEventStore & RunIndex {
    this.#storeInstance ??= createSqlEventStore(this.#sql, { manyRuns: false });
    return this.#storeInstance;
  }

  /**
   * Creates the run and runs its first execution at once. A run that was
   * created answers with its summary as it stands after that first turn, for
   * the caller to put in the project's run index (which it does in batches,
   * see runIndexReporter.ts); from then on this actor reports the run's end
   * itself, and reports it as running again whenever a new instance drives it.
   */
  async start(input: {
    runId: string;
    workflowId: string;
    name: string;
    data: JsonValue;
  }): Promise<StartedRun & { summary?: RunSummary }> {
    const now = this.#now();
    const run = createRun(this.#store, definitionNamed(input.name), input.data, {
      runId: input.runId,
      workflowId: input.workflowId,
      now,
    });
    if (!run.created) return run;
    // The first execution starts here at once, in this same turn, whose writes workerd commits
    // together when it ends. A run whose steps finish without waiting on anything ends within it:
    // created, run and ended in one write, with no alarm ever set. Before the execution first waits
    // (a step's promise), it arms the alarm, due now, in that same turn: the run's safety net should
    // the actor die mid-step (workerd fires and retries it; that execution records the interruption
    // and carries on). While this instance lives, the alarm joins the execution under way.
    // Should it fail, #drive arms the alarm to try again; the caller learns of the run, not of that.
    let ended: StoredEvent | null = null;
    let waited = () => {};
    const waiting = new Promise<void>((resolve) => (waited = resolve));
    this.#startsUnanswered.add(run.runId);
    const execution = this.#drive(run.runId, {
      reportFirst: false,
      armBeforeWaiting: true,
      onFirstWait: waited,
      onEnd: (event) => (ended = event),
    });
    // Answer once the execution has stopped, or a turn after it first waited: steps that return
    // without a promise have all run by then within this turn, and async steps that need no I/O
    // within the turn after it (a run that ended answers with its outcome).
    const nextTurn = waiting.then(() => new Promise((resolve) => setTimeout(resolve, 0)));
    await Promise.race([execution.catch(() => {}), nextTurn]);
    this.#startsUnanswered.delete(run.runId);
    const summary = this.#store.getRun(run.runId)!;
    // The caller indexes this summary; this instance reports the run's end after it. (A run that has
    // ended is not marked: should the sweep find it listed as running, recover reports it again.)
    if (summary.status === "running") this.#reports.set(run.runId, { status: "running", done: Promise.resolve() });
    // A run that has ended answers with its outcome, so `result()` need not ask again.
    const outcome = ended && outcomeOf(ended);
    return outcome ? { ...run, outcome, summary } : { ...run, summary };
  }

  /**
   * `/__workflow/:runId/execute`: runs the step loop now (or joins the one
   * running) and says whether the run is done, and (beyond the spec) whether
   * the caller should drive it again at once: only when the step-loop budget
   * ran out. A run waiting for time to pass (a retry's backoff, a step's
   * timeout) answers `{ done: false }`: its alarm wakes it, nobody need poll.
   */
  async execute(runId: string): Promise<ExecuteAnswer> {
    if (!this.#store.getRun(runId)) throw new PlatformError("not_found", `Workflow run "${runId}" does not exist.`);
    const result = await this.#drive(runId);
    if (result.status === "budget_exhausted") return { done: false, continue: true };
    return { done: result.status === "terminal" };
  }

  get(runId: string): WorkflowRunView | null {
    return describeRun(this.#store.events(runId));
  }

  /** Resolves with the run once it is terminal, or null after `maxWaitMS` (the caller asks again). */
  waitForTerminal(runId: string, maxWaitMS: number): Promise<WorkflowRunView | null> {
    const view = this.get(runId);
    if (!view) throw new PlatformError("not_found", `Workflow run "${runId}" does not exist.`);
    if (view.status !== "running") return Promise.resolve(view);
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
    if (summary.status === "running") {
      // A pending alarm is this actor's wake-up timer (retry, timeout, continuation): the run is being
      // driven. One long overdue is stale (such alarms can fail to fire) and does not count.
      const alarm = await this.ctx.storage.getAlarm();
      const alarmPending = alarm !== null && alarm > this.#now() - STALE_ALARM_MS;
      const outcome = recoverRun(this.#store, definitionNamed(summary.name), runId, this.#now(), {
        executingHere: this.#executions.has(runId) || alarmPending,
      });
      if (outcome.appended.some(isTerminalEvent)) this.#wake(runId);
      if (outcome.reenqueue) await this.ctx.storage.setAlarm(this.#now());
      // Not stuck yet but nobody will wake it (a step in flight when the actor restarted): arm its timeout.
      else if (outcome.reason === null && !alarmPending && !this.#executions.has(runId)) await this.#drive(runId);
      await this.#report(runId);
      return { reason: outcome.reason, reenqueued: outcome.reenqueue };
    }
    await this.#report(runId);
    return { reason: null, reenqueued: false };
  }

  /**
   * Beyond the spec: `workflow.send`. Appends event_received and drives the
   * run (a run that waits for that event goes on at once). The alarm, due
   * now, is the safety net should this instance die first, as in `start`.
   */
  async send(runId: string, name: string, payload: JsonValue): Promise<void> {
    appendReceivedEvent(this.#store, runId, name, payload, this.#now());
    await this.ctx.storage.setAlarm(this.#now());
    this.#drive(runId, { readAgain: true }).catch(() => {});
  }

  /**
   * Beyond the spec: `workflow.cancel`. Appends the terminal
   * workflow_cancelled; a step in flight here finds its seq taken and its
   * result is dropped. The alarm was this run's (one active run per actor).
   */
  async cancel(runId: string, reason: string | undefined): Promise<WorkflowRunView> {
    cancelRun(this.#store, runId, reason, this.#now());
    await this.ctx.storage.deleteAlarm();
    this.#wake(runId);
    await this.#report(runId);
    return this.get(runId) as WorkflowRunView;
  }

  override async alarm(): Promise<void> {
    await Promise.all(this.#store.activeRunIds().map((runId) => this.#drive(runId)));
  }

  /**
   * `onEnd` sees the run's terminal event should this execution append it.
   * `readAgain` (after a send): an execution already under way runs the loop
   * once more before it ends, so it cannot miss the event it was just sent.
   * `armBeforeWaiting` (a run's first execution, which no alarm covers yet):
   * the alarm is set, due now, before the execution first waits on anything;
   * `onFirstWait` is told then.
   */
  #drive(
    runId: string,
    {
      reportFirst = true,
      onEnd,
      readAgain = false,
      armBeforeWaiting = false,
      onFirstWait,
    }: {
      reportFirst?: boolean;
      onEnd?: (event: StoredEvent) => void;
      readAgain?: boolean;
      armBeforeWaiting?: boolean;
      onFirstWait?: () => void;
    } = {},
  ): Promise<ExecuteRunResult> {
    const running = this.#executions.get(runId);
    if (running) {
      if (readAgain) this.#again.add(runId);
      return running;
    }
    const execution = (async () => {
      // Whether an alarm may be pending for this run: every execution but a first one that never waited.
      let armed = !armBeforeWaiting;
      const beforeWaiting = () => {
        if (armed) return;
        armed = true;
        this.ctx.storage.setAlarm(this.#now()).catch(() => {});
        onFirstWait?.();
      };
      try {
        const summary = this.#store.getRun(runId)!;
        if (reportFirst) await this.#report(runId);
        let result: ExecuteRunResult;
        do {
          this.#again.delete(runId);
          result = await executeRun(this.#store, definitionNamed(summary.name), runId, {
            now: this.#now,
            // One execution per run in this single-threaded instance; a stretch's writes commit together anyway.
            exclusive: true,
            beforeWaiting,
            onEvent: (event) => {
              if (!isTerminalEvent(event)) return;
              onEnd?.(event);
              this.#wake(runId);
            },
          });
        } while (this.#again.has(runId) && result.status !== "terminal");
        const wakeAt = wakeTimeAfter(result, this.#now());
        if (wakeAt !== null) await this.ctx.storage.setAlarm(wakeAt);
        // Nothing is left to wake for (one active run per actor: the alarm was this run's).
        else if (result.status === "terminal" && armed) await this.ctx.storage.deleteAlarm();
        if (result.status === "terminal") await this.#report(runId);
        return result;
      } catch (error) {
        // An execution that failed outright (not a step failing) is tried again shortly.
        await this.ctx.storage.setAlarm(this.#now() + FAILED_EXECUTION_RETRY_MS);
        throw error;
      } finally {
        this.#executions.delete(runId);
        // Sent an event after the loop's last look: look again.
        if (this.#again.delete(runId)) this.#drive(runId).catch(() => {});
      }
    })();
    this.#executions.set(runId, execution);
    return execution;
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
   * the run as it stood then): at the end, and whenever this instance drives
   * or recovers a run it has not yet reported as running (after a restart). A report that would
   * not change the index is skipped (or joins the same report in flight): it
   * would cost an RPC to the project's one index actor at every execution and
   * for every active run at every recovery sweep. The index never takes a
   * terminal run back to running, so reports may arrive in any order.
   */
  #report(runId: string): Promise<void> {
    const summary = this.#store.getRun(runId);
    if (!summary || this.#startsUnanswered.has(runId)) return Promise.resolve();
    const last = this.#reports.get(runId);
    if (last?.status === summary.status) return last.done;
    this.#index ??= runIndexOf(this.env);
    const done = this.#index.record([summary]).then(
      () => {
        // A terminal run is reported once more only if asked again later (recovery); nothing to keep.
        if (summary.status !== "running" && this.#reports.get(runId)?.done === done) this.#reports.delete(runId);
      },
      (error: unknown) => {
        if (this.#reports.get(runId)?.done === done) this.#reports.delete(runId);
        throw error;
      },
    );
    this.#reports.set(runId, { status: summary.status, done });
    return done;
  }
}
