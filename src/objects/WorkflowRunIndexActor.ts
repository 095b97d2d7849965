import { DurableObject } from "cloudflare:workers";
import {
  acceptBulkOperation,
  type BulkAction,
  type BulkOperation,
  type BulkOperationLog,
  type BulkResult,
  carryOnBulkOperation,
} from "../engine/control/bulkOperation.ts";
import type { RunFilter, RunListPage, RunListQuery } from "../engine/storage/runQuery.ts";
import { createSqlBulkOperationLog } from "../engine/storage/sqlBulkOperations.ts";
import { createSqlRunIndex, type SqlRunIndex } from "../engine/storage/sqlRunIndex.ts";
import type { RunReport, RunSummary } from "../engine/storage/store.ts";
import type { StrandedRuns, WorkflowShape } from "../contracts/workflowShapes.ts";
import { findStrandedRuns } from "../engine/control/strandedRuns.ts";
import { isLiveStatus } from "../engine/execution/runSummary.ts";
import { durableObjectSql } from "./durableObjectSql.ts";
import { createLiveRunReleases, type LiveRunReleases } from "./liveRunReleases.ts";
import { workflowRunHost } from "./workflowRunHost.ts";
import { meterAlarmRun, setAlarmMetered } from "./storageMeter.ts";

/** A bulk operation's safety net: the alarm that carries it on should this instance die while it runs. */
const BULK_SAFETY_NET_MS = 30_000;
/** One alarm advances bulk operations for at most this long, then sets the next alarm and returns. */
const BULK_ALARM_BUDGET_MS = 25_000;

/**
 * One per project (named "index"): the list of the project's runs, which
 * live in many WorkflowRunActor instances. A run reports its summary when it
 * is created, when it parks (its position), pauses or ends (and whenever an
 * actor drives or recovers a run it has not yet reported, e.g. after a
 * restart), so `workflow.list`, the search, the stranded-runs check and the recovery
 * sweep read one table whose size follows the number of runs, never the
 * number of events. A running run's `updatedAt` here is therefore the time
 * of its last report, not of its last event.
 *
 * It also holds the project's bulk operations (cancelMany,
 * rerunMany): accepted here with the runs they mean, advanced in batches by
 * the call itself, and by this actor's alarm should the call's instance die.
 *
 * How it scales: one actor (one SQLite database, one thread) per project.
 * Every search reads one index range (see sqlRunIndex.ts), so a page costs
 * about the same at 1,000 runs as at 100,000; writes come in batches
 * (`record`). A project past what one actor writes comfortably would shard
 * this by key behind the same RunIndex interface.
 */
export class WorkflowRunIndexActor extends DurableObject {
  #index: SqlRunIndex;
  #bulk: BulkOperationLog;
  #releases: LiveRunReleases;
  /** Bulk operations this instance is advancing now (a call, or the alarm), for the other to join. */
  #advancing = new Map<string, Promise<BulkResult>>();

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env as never);
    const sql = durableObjectSql(ctx.storage);
    this.#index = createSqlRunIndex(sql);
    this.#bulk = createSqlBulkOperationLog(sql);
    this.#releases = createLiveRunReleases(sql);
  }

  /**
   * Writes the reports in one transaction; the answer leaves once it is
   * committed. The slots of the runs that ended are given back first (or
   * kept to give back with the next report). Callers batch: workflow.start
   * sends the runs started while its last call was under way together, an
   * actor its run's changes.
   */
  async record(reports: RunReport[]): Promise<void> {
    // A run that ended gives back its slot of the account's live-run budget (a repeat frees nothing), before
    // the index lists it ended: should this instance die in between, the report is made again.
    const ended = reports.filter((report) => !isLiveStatus(report.status)).map((report) => report.id);
    await this.#releases.release(workflowRunHost.liveRuns(this.env as never), ended);
    this.ctx.storage.transactionSync(() => this.#index.record(reports));
  }

  list(query: RunListQuery): RunListPage {
    return this.#index.listRuns(query);
  }

  get(runId: string): RunSummary | null {
    return this.#index.getRun(runId);
  }

  activeRunIds(): string[] {
    return this.#index.activeRunIds();
  }

  /** How many runs a filter matches (a bulk operation's dry run). */
  count(filter: RunFilter): number {
    return this.#index.matchRunIds(filter, 0).matched;
  }

  /** The stranded-runs check: the live runs code with `workflows` would strand. */
  findStrandedRuns(workflows: WorkflowShape[]): StrandedRuns {
    return findStrandedRuns(this.#index, workflows);
  }

  /** Retention: finished runs past their expiry (the sweep deletes each from its actor, then here). */
  expiredRunIds(now: number, limit: number): string[] {
    return this.#index.expiredRunIds(now, limit);
  }

  forget(runIds: string[]): void {
    this.ctx.storage.transactionSync(() => this.#index.forget(runIds));
  }

  /** `workflow.cancelMany`: cancels every run the filter matches (at most 10,000), in batches; answers once done. */
  cancelMany(filter: RunFilter, reason: string | undefined): Promise<BulkResult> {
    return this.#bulkOperation(
      { kind: "cancel", ...(reason === undefined ? {} : { reason }) },
      filter,
      "workflow.cancelMany",
    );
  }

  /** `workflow.rerunMany`: reruns every finished run the filter matches, in batches; answers once done. */
  rerunMany(filter: RunFilter, fromStep: string | undefined): Promise<BulkResult> {
    return this.#bulkOperation(
      { kind: "rerun", ...(fromStep === undefined ? {} : { fromStep }) },
      filter,
      "workflow.rerunMany",
    );
  }

  /** Carries on with the bulk operations no call is advancing (their caller's instance died). */
  override async alarm(): Promise<void> {
    meterAlarmRun();
    const began = Date.now();
    const mayContinue = () => Date.now() - began < BULK_ALARM_BUDGET_MS;
    for (const operation of this.#bulk.unfinishedBulkOperations()) await this.#advance(operation, mayContinue);
    if (this.#bulk.unfinishedBulkOperations().length > 0) await setAlarmMetered(this.ctx.storage, Date.now());
  }

  async #bulkOperation(action: BulkAction, filter: RunFilter, what: string): Promise<BulkResult> {
    const operation = acceptBulkOperation(this.#index, this.#bulk, {
      id: crypto.randomUUID(),
      action,
      filter,
      now: Date.now(),
      what,
    });
    if (!operation.done) await setAlarmMetered(this.ctx.storage, Date.now() + BULK_SAFETY_NET_MS);
    return this.#advance(operation, () => true);
  }

  /** Advances an operation, or joins this instance's advance of it under way. */
  #advance(operation: BulkOperation, mayContinue: () => boolean): Promise<BulkResult> {
    const running = this.#advancing.get(operation.id);
    if (running) return running;
    const controls = workflowRunHost.runControls(this.env as never);
    const advancing = carryOnBulkOperation(this.#index, this.#bulk, operation, {
      controls,
      mayContinue,
      onError: (runId, error) => console.error(`workflow bulk ${operation.action.kind}: run ${runId}:`, error),
    }).finally(() => this.#advancing.delete(operation.id));
    this.#advancing.set(operation.id, advancing);
    return advancing;
  }
}
