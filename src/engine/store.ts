import { PlatformError } from "../core/errors.ts";
import type { StoredEvent } from "./events.ts";

/**
 * Spec rule 3: the log's unique key (runId, seq) already holds an event at
 * `seq`: another writer took that seq first. Not an error: the loser of the
 * race treats it as a non-fatal race, reads what the winner wrote and backs off.
 */
export interface SeqTaken {
  runId: string;
  seq: number;
}

/** What an append did: the whole batch is in the log, or none of it because a seq it needs was taken. */
export type AppendResult = { appended: true } | { appended: false; seqTaken: SeqTaken };

/** What `createRunIfNoActive` did. */
export type CreateRunResult =
  | { created: true }
  /** The workflow id already has an active run: that run's id. */
  | { created: false; activeRunId: string }
  /** The run id already exists (its workflow_created holds seq 1). */
  | { created: false; seqTaken: SeqTaken };

/**
 * The event log of workflow runs. Synchronous on purpose: Durable Object
 * SQLite and node:sqlite both are, so a check-and-append is one transaction
 * with no await in between.
 *
 * Every implementation enforces the same rules (checked by the store
 * conformance suite in test/conformance/eventStoreConformance.ts):
 * - (runId, seq) is unique; a run's seqs are 1, 2, 3, … without gaps;
 * - all events of a run carry the same workflowId;
 * - a run starts only through `createRunIfNoActive`.
 * Losing a seq to another writer is a result (`seqTaken`), not an error; only
 * a batch that breaks a rule throws.
 */
export interface WorkflowEventStore {
  lastEvent(runId: string): StoredEvent | null;
  /** The run's events in seq order; only those with seq > `afterSeq` when given. Empty for an unknown run. */
  events(runId: string, afterSeq?: number): StoredEvent[];
  /**
   * All-or-nothing. Answers `{ appended: false, seqTaken }` when a (run_id,
   * seq) of the batch already exists (another executor won the race) and
   * writes nothing. Throws PlatformError("workflow_id_mismatch") if an event's
   * workflowId differs from the run's existing events, PlatformError("not_found")
   * for a run that was never created, PlatformError("conflict") for a batch
   * that would follow a terminal event, and PlatformError("internal") for a
   * batch whose seqs are not consecutive.
   */
  append(events: StoredEvent[]): AppendResult;
  /**
   * Atomically: if `created.workflowId` has an active (non-terminal) run,
   * answers `{ created: false, activeRunId }`; if the run id exists already,
   * `{ created: false, seqTaken }`; otherwise appends the workflow_created
   * event (seq 1) and answers `{ created: true }`.
   */
  createRunIfNoActive(created: StoredEvent): CreateRunResult;
  /** Beyond the spec: the newest run of `workflowId`, ended or not (idempotency keys). */
  latestRunOf(workflowId: string): RunSummary | null;
}

/**
 * `cancelled` is beyond the spec (workflow.cancel), and so is `queued`: a run under flow control
 * (flowControl.ts) waiting for its turn. `queued` and `running` are the active statuses.
 */
export const RUN_STATUSES = ["queued", "running", "completed", "failed", "cancelled"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** A run that has not ended: queued or running. */
export function isActiveStatus(status: RunStatus): boolean {
  return status === "running" || status === "queued";
}

/** One run as listed by `workflow.list`. */
export interface RunSummary {
  id: string;
  workflowId: string;
  name: string;
  status: RunStatus;
  /** Epoch ms of workflow_created. */
  createdAt: number;
  /** Epoch ms of the last event. */
  updatedAt: number;
}

export interface RunListQuery {
  name?: string;
  status?: RunStatus;
  /** 1 to {@link MAX_LIST_LIMIT}. */
  limit: number;
  /** Opaque; the `cursor` of the previous page. */
  cursor?: string;
}

export interface RunListPage {
  /** Newest first. */
  runs: RunSummary[];
  /** Present when more runs match; pass it back to get the next page. */
  cursor?: string;
}

export const DEFAULT_LIST_LIMIT = 50;
export const MAX_LIST_LIMIT = 100;

/**
 * What a backend that owns many runs needs besides the log: listing and the
 * set of runs the recovery sweep must look at. Kept in step with the log by
 * the same transactions that append to it.
 */
export interface RunIndex {
  getRun(runId: string): RunSummary | null;
  listRuns(query: RunListQuery): RunListPage;
  /** Run ids whose last event is not terminal, queued runs excepted (their queue starts them, not recovery). */
  activeRunIds(): string[];
}

/**
 * Checks a user's list filter and fills in the default limit; throws
 * `invalid_input` naming the bad field.
 */
export function toRunListQuery(
  filter: { name?: unknown; status?: unknown; limit?: unknown; cursor?: unknown } = {},
): RunListQuery {
  const query: RunListQuery = { limit: DEFAULT_LIST_LIMIT };
  if (filter.name !== undefined) {
    if (typeof filter.name !== "string" || filter.name === "")
      throw new PlatformError("invalid_input", "workflow.list: name must be a non-empty string");
    query.name = filter.name;
  }
  if (filter.status !== undefined) {
    if (!RUN_STATUSES.includes(filter.status as RunStatus)) {
      throw new PlatformError(
        "invalid_input",
        `workflow.list: status must be one of ${RUN_STATUSES.join(", ")}, got ${JSON.stringify(filter.status)}`,
      );
    }
    query.status = filter.status as RunStatus;
  }
  if (filter.limit !== undefined) {
    if (!Number.isInteger(filter.limit) || (filter.limit as number) < 1 || (filter.limit as number) > MAX_LIST_LIMIT) {
      throw new PlatformError(
        "invalid_input",
        `workflow.list: limit must be an integer from 1 to ${MAX_LIST_LIMIT}, got ${String(filter.limit)}`,
      );
    }
    query.limit = filter.limit as number;
  }
  if (filter.cursor !== undefined) {
    if (typeof filter.cursor !== "string" || filter.cursor === "")
      throw new PlatformError("invalid_input", "workflow.list: cursor must be the string returned by a previous call");
    query.cursor = filter.cursor;
  }
  return query;
}

/** The list position a cursor encodes (every store numbers runs in creation order); throws on a cursor no store made. */
export function decodeListCursor(cursor: string): number {
  const position = /^[1-9][0-9]{0,15}$/.test(cursor) ? Number(cursor) : NaN;
  if (!Number.isSafeInteger(position))
    throw new PlatformError(
      "invalid_input",
      `workflow.list: cursor ${JSON.stringify(cursor)} is not one this platform returned`,
    );
  return position;
}
