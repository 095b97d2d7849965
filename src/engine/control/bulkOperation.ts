import { isPlatformError, PlatformError } from "../../core/errors.ts";
import { isEmptyFilter, toRunFilter, type RunFilter } from "../storage/runQuery.ts";
import type { RunIndex } from "../storage/store.ts";

/**
 * `workflow.cancelMany(filter, { reason })` and
 * `workflow.rerunMany(filter, { fromStep })`. A bulk operation is itself
 * durable: the runs it means are written down when it is accepted (at most
 * {@link MAX_BULK_RUNS}), then acted on in batches, each batch's outcome
 * recorded before the next; a host that restarts carries on with the runs not
 * yet done. The same store holds the operations and the runs (the index actor
 * under Durable Objects, the node:sqlite file, memory).
 */

/** What a bulk operation does to each run. */
export type BulkAction = { kind: "cancel"; reason?: string } | { kind: "rerun"; fromStep?: string };

/** At most this many runs per call: a filter that matches more is refused (narrow it, e.g. with `since`). */
export const MAX_BULK_RUNS = 10_000;

/** Runs acted on at once: one batch's outcomes are recorded together. */
export const BULK_BATCH_SIZE = 50;

export interface BulkOperation {
  id: string;
  action: BulkAction;
  filter: RunFilter;
  createdAt: number;
  /** How many runs matched when the operation was accepted. */
  matched: number;
  /** How many of them were cancelled (or rerun) so far: a run that finished (or was removed) meanwhile is not. */
  affected: number;
  done: boolean;
}

/** What `cancelMany` and `rerunMany` answer. */
export interface BulkResult {
  matched: number;
  affected: number;
}

/** Where bulk operations are kept, beside the runs they act on. */
export interface BulkOperationLog {
  /** Writes the operation and the runs it acts on (all pending) in one transaction. */
  createBulkOperation(operation: Omit<BulkOperation, "affected" | "done">, runIds: readonly string[]): void;
  /** Up to `limit` runs of the operation not yet acted on, in the order they were written. */
  pendingBulkRuns(operationId: string, limit: number): string[];
  /** Records a batch's outcomes in one transaction; the operation is done once no run is pending. */
  settleBulkRuns(operationId: string, outcomes: readonly { runId: string; affected: boolean }[]): void;
  bulkOperation(operationId: string): BulkOperation | null;
  /** Operations accepted and not done: what a host carries on with after a restart. */
  unfinishedBulkOperations(): BulkOperation[];
}

/**
 * Checks a bulk operation's filter: an empty one is refused (it would mean
 * every run of the project), and so are list-only fields and unknown ones.
 */
export function toBulkFilter(input: unknown, what: string): RunFilter {
  const filter = toRunFilter(input, what);
  if (isEmptyFilter(filter))
    throw new PlatformError(
      "invalid_input",
      `${what}: the filter is empty; name the runs (e.g. { status: "failed", name: "checkout" })`,
    );
  return filter;
}

/** The options a bulk action of `kind` takes: `{ reason? }` for a cancel, `{ fromStep? }` for a rerun. */
export type BulkOptions<K extends BulkAction["kind"]> = Omit<Extract<BulkAction, { kind: K }>, "kind">;

/** The options of a `cancelMany` or `rerunMany` call (and `rerun`'s), checked. */
export function toBulkOptions<K extends BulkAction["kind"]>(kind: K, options: unknown, what: string): BulkOptions<K> {
  if (options !== undefined && (typeof options !== "object" || options === null || Array.isArray(options)))
    throw new PlatformError("invalid_input", `${what}: the options must be an object`);
  const given = (options ?? {}) as Record<string, unknown>;
  const allowed = kind === "cancel" ? "reason" : "fromStep";
  const unknown = Object.keys(given).find((key) => key !== allowed && given[key] !== undefined);
  if (unknown)
    throw new PlatformError(
      "invalid_input",
      `${what}: unknown option ${JSON.stringify(unknown)} (it takes ${allowed})`,
    );
  const value = given[allowed];
  if (value !== undefined && (typeof value !== "string" || value === ""))
    throw new PlatformError("invalid_input", `${what}: ${allowed} must be a non-empty string`);
  return (value === undefined ? {} : { [allowed]: value }) as BulkOptions<K>;
}

/** An operation asked for: its new id, what it does to which runs, when, and the call's name for messages. */
export interface BulkOperationRequest {
  id: string;
  action: BulkAction;
  filter: RunFilter;
  now: number;
  /** The public call, e.g. `workflow.cancelMany`, that an error message names. */
  what: string;
}

/**
 * Accepts an operation: matches its runs in the index (refusing more than
 * {@link MAX_BULK_RUNS}) and writes them down. Answers the operation.
 */
export function acceptBulkOperation(
  index: Pick<RunIndex, "matchRunIds">,
  log: BulkOperationLog,
  { id, action, filter, now, what }: BulkOperationRequest,
): BulkOperation {
  const { runIds, matched } = index.matchRunIds(filter, MAX_BULK_RUNS);
  if (matched > MAX_BULK_RUNS)
    throw new PlatformError(
      "invalid_input",
      `${what}: the filter matches ${matched} runs; at most ${MAX_BULK_RUNS} are acted on per call: narrow it (e.g. with since and until)`,
      { matched, max: MAX_BULK_RUNS },
    );
  log.createBulkOperation({ id, action, filter, createdAt: now, matched }, runIds);
  return { id, action, filter, createdAt: now, matched, affected: 0, done: runIds.length === 0 };
}

/**
 * Acts on an operation's pending runs, a batch at a time, until none is left
 * or `mayContinue` says stop (a host's time budget); answers the operation as
 * it then stands. `act` answers whether it changed the run: false when the
 * run had finished, or was gone, meanwhile; an error it throws counts the run
 * as not affected and is passed to `onError` (the operation goes on).
 */
export async function advanceBulkOperation(
  store: BulkOperationLog,
  operationId: string,
  act: (runId: string) => Promise<boolean>,
  options: { mayContinue?: () => boolean; onError?: (runId: string, error: unknown) => void } = {},
): Promise<BulkOperation | null> {
  for (;;) {
    const pending = store.pendingBulkRuns(operationId, BULK_BATCH_SIZE);
    if (pending.length === 0 || options.mayContinue?.() === false) return store.bulkOperation(operationId);
    const outcomes = await Promise.all(
      pending.map(async (runId) => {
        try {
          return { runId, affected: await act(runId) };
        } catch (error) {
          options.onError?.(runId, error);
          return { runId, affected: false };
        }
      }),
    );
    store.settleBulkRuns(operationId, outcomes);
  }
}

/** How a host cancels and reruns one run: what a bulk operation acts through (the backend's own methods). */
export interface BulkRunControls {
  cancel(runId: string, reason: string | undefined): unknown;
  rerun(runId: string, options: { fromStep?: string }): unknown;
}

/**
 * Carries on with an accepted operation ({@link advanceBulkOperation}) through the host's `controls`
 * and answers its result as it then stands. A run this operation already rerun (before a restart)
 * counts as affected and is not rerun twice; one {@link isSkippedRun} excuses is not affected.
 */
export async function carryOnBulkOperation(
  index: Pick<RunIndex, "listRuns">,
  log: BulkOperationLog,
  operation: BulkOperation,
  options: {
    controls: BulkRunControls;
    mayContinue?: () => boolean;
    onError?: (runId: string, error: unknown) => void;
  },
): Promise<BulkResult> {
  const { controls } = options;
  const { action } = operation;
  const act = async (runId: string): Promise<boolean> => {
    try {
      if (action.kind === "cancel") {
        await controls.cancel(runId, action.reason);
        return true;
      }
      if (index.listRuns({ rerunOf: runId, since: operation.createdAt, limit: 1 }).runs.length > 0) return true;
      await controls.rerun(runId, action.fromStep === undefined ? {} : { fromStep: action.fromStep });
      return true;
    } catch (error) {
      if (isSkippedRun(error)) return false;
      throw error;
    }
  };
  const settled = await advanceBulkOperation(log, operation.id, act, options);
  return { matched: settled?.matched ?? operation.matched, affected: settled?.affected ?? 0 };
}

/**
 * Whether an error from cancelling or rerunning one run of a bulk operation
 * means only that there was nothing to do: the run finished (or, for a
 * rerun, has not) or is gone meanwhile, never reached the step to rerun from,
 * or its workflow id has an active run. The run is counted as not affected.
 */
export function isSkippedRun(error: unknown): boolean {
  return isPlatformError(error) && ["conflict", "not_found", "invalid_input", "already_active"].includes(error.code);
}
