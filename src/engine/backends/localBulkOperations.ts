/**
 * The local backend's bulk operations (`cancelMany`, `rerunMany`): accepted into its store and
 * carried out at once through the backend's own cancel and rerun; one a restart interrupted is
 * carried on at start-up.
 */
import {
  acceptBulkOperation,
  type BulkAction,
  type BulkOperation,
  type BulkOperationLog,
  type BulkResult,
  type BulkRunControls,
  carryOnBulkOperation,
} from "../control/bulkOperation.ts";
import type { RunFilter } from "../storage/runQuery.ts";
import type { RunIndex } from "../storage/store.ts";

/** What bulk operations go through: the store, the backend's cancel and rerun, ids, the clock, its stop signal, its error log. */
export interface LocalBulkHost {
  store: RunIndex & BulkOperationLog;
  controls: BulkRunControls;
  newRunId: () => string;
  now: () => number;
  signal: AbortSignal;
  logError: (message: string, error: unknown) => void;
}

export function createLocalBulkOperations({ store, controls, newRunId, now, signal, logError }: LocalBulkHost) {
  /** Carries an accepted operation on until it is done or the backend stops. */
  function carryOut(operation: BulkOperation): Promise<BulkResult> {
    return carryOnBulkOperation(store, store, operation, {
      controls,
      mayContinue: () => !signal.aborted,
      onError: (runId, error) => logError(`Bulk ${operation.action.kind} of workflow run ${runId} failed`, error),
    });
  }

  return {
    carryOut,
    /** Accepts an operation (`what` names the call in its errors) and carries it out. */
    start(action: BulkAction, filter: RunFilter, what: string): Promise<BulkResult> {
      return carryOut(acceptBulkOperation(store, store, { id: newRunId(), action, filter, now: now(), what }));
    },
  };
}
