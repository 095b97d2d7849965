import { DurableObject } from "cloudflare:workers";
import { createSqlRunIndex, type SqlRunIndex } from "../../../engine/sqlRunIndex.ts";
import type { RunListPage, RunListQuery, RunSummary } from "../../../engine/store.ts";
import { durableObjectSql } from "./durableObjectSql.ts";

/**
 * One per project (named "index"): the list of the project's runs, which live
 * in many WorkflowRunActor instances. A run reports its summary when it is created
 * and when it ends (and whenever an actor drives or recovers a run it has not
 * yet reported as running, e.g. after a restart), so `workflow.list` and the
 * recovery sweep read one small table whose size follows the number of runs,
 * never the number of events. A running run's `updatedAt` here is therefore
 * the time of its last report, not of its last event.
 */
export class WorkflowRunIndexActor extends DurableObject {
  #index: SqlRunIndex;

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env as never);
    this.#index = createSqlRunIndex(durableObjectSql(ctx.storage));
  }

  /** Summaries waiting for the next batch write, and that write's promise. */
  #pending: RunSummary[] = [];
  #flush: Promise<void> | null = null;

  /**
   * Resolves once the summaries are written. Reports arriving together
   * (every run of the project reports here, one by one from its actor or in
   * batches from the isolates that start runs) are written in one
   * transaction after the current ones are in, so a burst of runs costs a
   * few commits rather than one each.
   */
  record(summaries: RunSummary[]): Promise<void> {
    this.#pending.push(...summaries);
    this.#flush ??= new Promise<void>((resolve) => setTimeout(resolve, 0)).then(() => {
      const batch = this.#pending;
      this.#pending = [];
      this.#flush = null;
      this.ctx.storage.transactionSync(() => {
        for (const one of batch) this.#index.record(one);
      });
    });
    return this.#flush;
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
}
