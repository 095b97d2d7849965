import { DurableObject } from "cloudflare:workers";
import { PlatformError } from "../core/errors.ts";
import type { Clock } from "../engine/api/clock.ts";
import type { QueuedRunView } from "../engine/execution/describeRun.ts";
import {
  decideFlow,
  EMPTY_FLOW_KEY,
  explainQueued,
  type FlowControl,
  type FlowDecision,
  type FlowInput,
  type FlowKeyState,
  type QueueRank,
} from "../engine/flow/flowControl.ts";
import type { JsonValue } from "../engine/api/json.ts";
import { isLiveStatus, type RunStatus, type RunReport } from "../engine/storage/store.ts";
import { getWorkflowDefinition, type StartedRun } from "../engine/api/workflowApi.ts";
import { actorClient } from "./actorClient.ts";
import { durableObjectSql } from "./durableObjectSql.ts";
import { actorIdOfRun } from "./runIds.ts";
import type { SyncSql } from "../engine/storage/syncSql.ts";
import { workflowRunHost } from "./workflowRunHost.ts";
import { meterAlarmRun, setAlarmMetered } from "./storageMeter.ts";

/** What a run actor is asked by `start` (WorkflowRunActor.start's input). */
export interface RunStartInput {
  runId: string;
  workflowId: string;
  name: string;
  data: JsonValue;
  once?: boolean;
  /** The flow key the run is counted under, and whether it is created queued. */
  flowKey?: string;
  queued?: boolean;
  /** Its rank among the key's queued runs (priority, fairness value); absent: the default. */
  rank?: QueueRank;
  /** When the queue counted the start (its workflow_created's time). */
  at?: number;
  idempotency?: { key: string; ttlMS: number };
  /** A child's nesting depth, its parent's + 1 (see engine/control/children.ts). */
  childDepth?: number;
  /** The run whose step starts this one as a child (see engine/control/children.ts). */
  parentRunId?: string;
}

/** The run actor's methods a queue calls (declared here, not imported, so the two actors do not import each other). */
interface QueuedRunActor {
  start(input: RunStartInput): StartedRun & { summary?: RunReport };
  dequeue(runId: string, at: number): boolean;
  replaceQueuedData(runId: string, data: JsonValue, at: number): string | null;
  status(runId: string): RunStatus | null;
}

export interface FlowKeyActorEnv {
  WORKFLOW_RUNS: DurableObjectNamespace;
}

/** While runs wait, the queue checks this often that the runs holding its slots are still active (a lost `ended`). */
export const FLOW_RECONCILE_MS = 30_000;

const SCHEMA = `CREATE TABLE IF NOT EXISTS _flow_key (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    workflow_name TEXT NOT NULL,
    key TEXT NOT NULL,
    state TEXT NOT NULL
  );
  CREATE TABLE IF NOT EXISTS _flow_undequeued (run_id TEXT PRIMARY KEY);`;

/**
 * One per (workflow, key) of a workflow with flow control (named by both, see flowKeyClient.ts):
 * the key's queue, its concurrency slots, its throttle's window and its debounced run, as one row
 * decided by the pure `decideFlow` (flowControl.ts). Every start of the key comes here first; it
 * reserves the run's place, then has the run's own actor create it running or queued; a run's actor
 * tells it when the run ends, and it starts the next (workflow_dequeued) in arrival order. Its alarm
 * is the key's timer (a throttle's period, a debounce's quiet period) and, while runs wait, a check
 * every {@link FLOW_RECONCILE_MS} of the runs that hold its slots, so a lost message never holds a
 * slot for good. A busy key costs one actor; keys never share one, and the project's run index
 * hears only of each run's start and end.
 */
export class WorkflowFlowKeyActor extends DurableObject<FlowKeyActorEnv> {
  #sql: SyncSql;
  #now: Clock;
  #loaded: { workflowName: string; key: string; state: FlowKeyState } | null = null;
  /** When the pending reconcile is due: set once when runs start to wait, not pushed back by later changes. */
  #reconcileAt: number | null = null;
  /**
   * Runs given a slot whose dequeue call failed: the reconcile alarm is kept for them though nothing else
   * waits. Stored (written only when a dequeue fails), so a restart before that alarm does not forget them.
   */
  readonly #undequeued = new Set<string>();
  /**
   * The alarm this actor armed (null: none), or undefined until it arms or clears one here (after a
   * restart it does not know). Each `setAlarm` is a row written on the bill: one is set only when the
   * time changes, not on every input.
   */
  #armedAt: number | null | undefined;

  constructor(ctx: DurableObjectState, env: FlowKeyActorEnv) {
    super(ctx, env);
    this.#now = workflowRunHost.clock;
    this.#sql = durableObjectSql(ctx.storage);
  }

  /** A start of the key: answers the run as `workflow.start` does (with its summary for the run index when created). */
  async start(input: RunStartInput & { key: string }): Promise<StartedRun & { summary?: RunReport }> {
    const { key, ...run } = input;
    this.#load(run.name, key);
    for (;;) {
      const at = this.#now();
      const decision = this.#apply({
        type: "arrive",
        runId: run.runId,
        now: at,
        ...(run.rank ? { rank: run.rank } : {}),
      });
      const arrival = decision.arrival!;
      // Others the decision let start (a throttle's period just ended) go first: they arrived first.
      await this.#carryOut(decision, at);
      if (arrival.kind === "join") {
        const workflowId = await this.#runActor(arrival.runId).replaceQueuedData(arrival.runId, run.data, at);
        if (workflowId !== null) return { runId: arrival.runId, workflowId, created: false };
        // The debounced run started or ended meanwhile: forget it and arrive again.
        await this.#step({ type: "ended", runId: arrival.runId, now: this.#now() });
        continue;
      }
      // A run id the key holds already (a scheduled tick delivered twice): its actor answers that run.
      if (arrival.kind === "held") return this.#runActor(run.runId).start({ ...run, flowKey: key, queued: true, at });
      let started: StartedRun & { summary?: RunReport };
      try {
        started = await this.#runActor(run.runId).start({
          ...run,
          flowKey: key,
          queued: arrival.kind === "queue",
          at,
        });
      } catch (error) {
        // The call may have failed after the run's actor created it: the key forgets only a run that
        // actor does not hold or that has ended. Unanswered, the key keeps it: its dequeue or the reconcile
        // alarm asks again.
        const status = await this.#runActor(run.runId)
          .status(run.runId)
          .catch(() => "queued" as const);
        if (status === null || !isLiveStatus(status))
          await this.#step({ type: "ended", runId: run.runId, now: this.#now() });
        throw error;
      }
      if (!started.created) await this.#step({ type: "ended", runId: run.runId, now: this.#now() });
      return started;
    }
  }

  /** A run of the key ended (or was cancelled, queued or not): its slot or place is free. Idempotent. */
  async ended(runId: string): Promise<void> {
    if (!this.#load()) return;
    await this.#step({ type: "ended", runId, now: this.#now() });
  }

  /** What a queued run of the key waits for; null when the key does not hold it. */
  explain(runId: string): QueuedRunView | null {
    const loaded = this.#load();
    if (!loaded) return null;
    const explained = explainQueued(loaded.state, this.#flow(loaded.workflowName), {
      key: loaded.key,
      runId,
      now: this.#now(),
    });
    return explained && { key: loaded.key, ...explained };
  }

  /** The key's state as stored (tests and the console's detail). */
  state(): FlowKeyState | null {
    return this.#load()?.state ?? null;
  }

  override async alarm(): Promise<void> {
    meterAlarmRun();
    // A running alarm is no longer armed.
    this.#armedAt = null;
    const loaded = this.#load();
    if (!loaded) return;
    this.#reconcileAt = null;
    await this.#reconcile();
    await this.#step({ type: "tick", now: this.#now() });
  }

  /**
   * While runs wait: asks the actors of the runs holding slots whether they still do, frees those that
   * do not (an end that never arrived) and starts again those whose start did not reach them. A queued
   * run that ended unheard is found when its turn comes (its actor refuses the start).
   */
  async #reconcile(): Promise<void> {
    const { state } = this.#load()!;
    const waiting = state.queue.length > 0 || state.debounce !== null || this.#undequeued.size > 0;
    if (!waiting) return;
    for (const runId of state.active) {
      let status: RunStatus | null;
      try {
        status = await this.#runActor(runId).status(runId);
      } catch {
        continue;
      }
      if (status === null || !isLiveStatus(status)) {
        await this.#step({ type: "ended", runId, now: this.#now() });
      } else if (status === "queued" && state.active.includes(runId)) {
        // Its start was decided but did not reach its actor.
        await this.#dequeue(runId, this.#now());
      }
    }
  }

  /** Decides, stores the key's next state and sets its alarm; the caller carries out the dequeues. */
  #apply(input: FlowInput): FlowDecision {
    const loaded = this.#loaded!;
    const decision = decideFlow(loaded.state, this.#flow(loaded.workflowName), input);
    loaded.state = decision.state;
    this.#sql.run(
      "INSERT INTO _flow_key (id, workflow_name, key, state) VALUES (1, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET state = excluded.state",
      loaded.workflowName,
      loaded.key,
      JSON.stringify(decision.state),
    );
    const waiting = decision.state.queue.length > 0 || decision.state.debounce !== null || this.#undequeued.size > 0;
    this.#reconcileAt = waiting ? (this.#reconcileAt ?? input.now + FLOW_RECONCILE_MS) : null;
    const next = [decision.wakeAt, this.#reconcileAt].filter((at): at is number => at !== null);
    this.#arm(next.length > 0 ? Math.min(...next) : null);
    return decision;
  }

  /** Arms the alarm at `at` (null: none), unless it is armed there already. */
  #arm(at: number | null): void {
    if (at === this.#armedAt) return;
    this.#armedAt = at;
    if (at === null) void this.ctx.storage.deleteAlarm();
    else void setAlarmMetered(this.ctx.storage, at);
  }

  /** Feeds the key an input and starts the runs it dequeues. */
  async #step(input: FlowInput): Promise<void> {
    await this.#carryOut(this.#apply(input), input.now);
  }

  /** Starts the runs a decision dequeued, in order, at the time it was decided (a throttle counts the log's times). */
  async #carryOut(decision: FlowDecision, at: number): Promise<void> {
    for (const runId of decision.dequeue) await this.#dequeue(runId, at);
  }

  async #dequeue(runId: string, at: number): Promise<void> {
    let dequeued: boolean;
    try {
      dequeued = await this.#runActor(runId).dequeue(runId, at);
    } catch {
      // Left holding its slot: the reconcile alarm asks its actor again, armed now should nothing else wait.
      this.#undequeued.add(runId);
      this.#sql.run("INSERT OR IGNORE INTO _flow_undequeued (run_id) VALUES (?)", runId);
      this.#reconcileAt ??= this.#now() + FLOW_RECONCILE_MS;
      const armed = this.#armedAt === undefined ? await this.ctx.storage.getAlarm() : this.#armedAt;
      if (armed === null || armed > this.#reconcileAt) this.#arm(this.#reconcileAt);
      return;
    }
    if (this.#undequeued.delete(runId)) this.#sql.run("DELETE FROM _flow_undequeued WHERE run_id = ?", runId);
    if (!dequeued) {
      const status = await this.#runActor(runId)
        .status(runId)
        .catch(() => "queued" as const);
      if (status === null || !isLiveStatus(status)) await this.#step({ type: "ended", runId, now: this.#now() });
    }
  }

  #runActor(runId: string) {
    const id = actorIdOfRun(this.env.WORKFLOW_RUNS, runId);
    if (!id) throw new PlatformError("internal", `"${runId}" is not a run id of this project`);
    return actorClient<QueuedRunActor>(this.env.WORKFLOW_RUNS.get(id));
  }

  #flow(workflowName: string): FlowControl {
    const flow = getWorkflowDefinition(workflowName)?.flow;
    if (!flow)
      throw new PlatformError(
        "unknown_workflow",
        `No workflow named ${JSON.stringify(workflowName)} with flow control is registered in this project's code.`,
      );
    return flow;
  }

  /** The stored key (made on first use when its workflow and key are given); null for a key never used. */
  #load(workflowName?: string, key?: string) {
    if (this.#loaded) return this.#loaded;
    this.#sql.script(SCHEMA);
    const [row] = this.#sql.all<{ workflow_name: string; key: string; state: string }>(
      "SELECT workflow_name, key, state FROM _flow_key WHERE id = 1",
    );
    if (row) this.#loaded = { workflowName: row.workflow_name, key: row.key, state: JSON.parse(row.state) };
    else if (workflowName !== undefined && key !== undefined)
      this.#loaded = { workflowName, key, state: EMPTY_FLOW_KEY };
    for (const { run_id } of this.#sql.all<{ run_id: string }>("SELECT run_id FROM _flow_undequeued"))
      this.#undequeued.add(run_id);
    return this.#loaded;
  }
}
