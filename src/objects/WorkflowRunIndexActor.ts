import { DurableObject } from "cloudflare:workers";
import { createSqlRunIndex, type SqlRunIndex } from "../engine/sqlRunIndex.ts";
import type { RunListPage, RunListQuery, RunSummary } from "../engine/store.ts";
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

  /**
   * Writes the summaries in one transaction; the answer leaves once it is
   * committed. Callers batch: workflow.start sends the runs started while
   * its last call was under way together, an actor its run's changes.
   */
  record(summaries: RunSummary[]): void {
    this.ctx.storage.transactionSync(() => {
      for (const summary of summaries) this.#index.record(summary);
    });
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
