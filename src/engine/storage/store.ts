import type { StoredEvent } from "../execution/events.ts";
import type { RunFilter, RunListPage, RunListQuery } from "./runQuery.ts";
import type { LivePosition, RunSummary } from "../execution/runSummary.ts";

export type { RunListPage, RunListQuery } from "./runQuery.ts";
export {
  RUN_STATUSES,
  LIVE_STATUSES,
  TERMINAL_STATUSES,
  ACTIVE_STATUSES,
  isLiveStatus,
  isActiveStatus,
} from "../execution/runSummary.ts";
export type { RunStatus, RunSummary, RunReport, LivePosition } from "../execution/runSummary.ts";

/**
 * A lost race: the log's unique key (runId, seq) already holds an event at
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
  /** The run's first event (its workflow_created): what a run's end and a repeated start read, not the whole log. */
  createdEvent(runId: string): StoredEvent | null;
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
   * Atomically: if `created.workflowId` has an active (live) run, answers
   * `{ created: false, activeRunId }`; if the run id exists already,
   * `{ created: false, seqTaken }`; otherwise appends the workflow_created
   * event (seq 1) and `options.following` after it (a rerun's copied steps:
   * they follow the append rules) and answers `{ created: true }`.
   * `options.retentionMS` is how long the run is kept once it ended.
   */
  createRunIfNoActive(created: StoredEvent, options?: CreateRunStoreOptions): CreateRunResult;
  /** Retention: deletes these runs' events and summaries; unknown ids are skipped. */
  forgetRuns(runIds: readonly string[]): void;
  /** The newest run of `workflowId`, ended or not (idempotency keys). */
  latestRunOf(workflowId: string): RunSummary | null;
  /** Records that `watcherRunId` waits for `runId` to end (`waitForRun`); idempotent. */
  watchRun(runId: string, watcherRunId: string): void;
  /** The runs waiting for `runId` to end (each once). */
  runWatchers(runId: string): string[];
}

export interface CreateRunStoreOptions {
  /** Events that follow workflow_created in the same transaction (seq 2, 3, …). */
  following?: StoredEvent[];
  /** How long the run is kept once it ended; default {@link DEFAULT_RETENTION_MS}. */
  retentionMS?: number;
}

/** How long a finished run is kept by default: 30 days. */
export const DEFAULT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * What a backend that owns many runs needs besides the log: listing and
 * searching, the runs the recovery sweep must look at, and what the push
 * check and retention read. Kept in step with the log by the same
 * transactions that append to it (or, for the Durable Object backend's index
 * actor, by the runs' reports). One interface for every store: a sharded
 * index later implements the same.
 */
export interface RunIndex {
  getRun(runId: string): RunSummary | null;
  listRuns(query: RunListQuery): RunListPage;
  /**
   * Run ids whose status is `running` or `waiting` (the recovery sweep's list): a paused run is left
   * alone until resumed, and a queued run until its queue starts it.
   */
  activeRunIds(): string[];
  /** The ids of the runs a bulk operation means, newest first, at most `max`; `matched` counts them all. */
  matchRunIds(filter: RunFilter, max: number): { runIds: string[]; matched: number };
  /** Live runs counted by workflow and position. */
  livePositions(): LivePosition[];
  /** Live runs of `name` at `step`, newest first, at most `limit`. */
  liveRunsAt(name: string, step: string, limit: number): RunSummary[];
  /** Finished runs whose `expiresAt` has passed at `now`, oldest expiry first, at most `limit`. */
  expiredRunIds(now: number, limit: number): string[];
}
