import { DurableObject } from "cloudflare:workers";
import { execMetered } from "./storageMeter.ts";
import { createLiveRunLedger, type HoldOutcome, type LedgerSql, type LiveRunLedger } from "./liveRunLedger.ts";

/**
 * One actor per account (`account:<owner id>`, exported by the API worker):
 * the slots of the account's live runs, all its projects together (rules in
 * liveRunLedger.ts). Single-threaded and every method one synchronous
 * transaction, so concurrent fan-outs cannot pass the cap together.
 */
export class LiveRunBudget extends DurableObject {
  readonly #ledger: LiveRunLedger;

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env as never);
    const { sql } = ctx.storage;
    // Through the meter, as the workflow actors' SQL is: a run started under the platform costs these rows too.
    const ledgerSql: LedgerSql = {
      all: (query, ...params) => execMetered(sql, query, ...params) as never,
      run: (query, ...params) => void execMetered(sql, query, ...params),
      transaction: (fn) => ctx.storage.transactionSync(fn),
    };
    this.#ledger = createLiveRunLedger(ledgerSql);
  }

  hold(projectId: number, runIds: string[], cap: number): HoldOutcome {
    return this.#ledger.hold(projectId, runIds, cap);
  }

  release(projectId: number, runIds: string[]): number {
    return this.#ledger.release(projectId, runIds);
  }

  live(): number {
    return this.#ledger.live();
  }
}

/** The budget of the account that owns a project. */
export function accountLiveRunBudget(namespace: DurableObjectNamespace<LiveRunBudget>, ownerId: number) {
  return namespace.get(namespace.idFromName(`account:${ownerId}`));
}
