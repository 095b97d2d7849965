import { PlatformError } from "../../core/errors.ts";
import { checkRunBatch, groupBatch, summaryChange } from "../execution/appendRules.ts";
import type { BulkOperation, BulkOperationLog } from "../control/bulkOperation.ts";
import { isTerminalEvent, type StoredEvent } from "../execution/events.ts";
import { lastStateEvent } from "../control/receivedEvents.ts";
import { freezeJson, type JsonValue } from "../api/json.ts";
import {
  decodeListCursor,
  encodeListCursor,
  isAfterCursor,
  matchesFilter,
  type RunListPage,
  type RunListQuery,
} from "./runQuery.ts";
import {
  DEFAULT_RETENTION_MS,
  isActiveStatus,
  isLiveStatus,
  type LivePosition,
  type RunIndex,
  type RunSummary,
  type WorkflowEventStore,
} from "./store.ts";

interface MemoryRun {
  /** The order runs were created in, from 1: ties runs started in the same millisecond. */
  position: number;
  summary: RunSummary;
  retentionMS: number;
  /** Events as JSON text, so a stored event can never be mutated through a returned object. */
  rows: string[];
}

interface MemoryBulkOperation {
  operation: BulkOperation;
  pending: string[];
}

export type MemoryEventStore = WorkflowEventStore & RunIndex & BulkOperationLog;

/**
 * An event store in a plain Map with the same rules as the SQLite stores.
 * For unit tests and for running workflows in tests of user code; it
 * forgets everything with the process. Its searches scan every run: fine for
 * what it holds.
 */
export function createMemoryEventStore(): MemoryEventStore {
  const runs = new Map<string, MemoryRun>();
  let created = 0;
  const activeByWorkflowId = new Map<string, string>();
  const operations = new Map<string, MemoryBulkOperation>();
  /** Per run, the runs waiting for it to end (`waitForRun`). */
  const watchers = new Map<string, string[]>();

  const decode = (row: string): StoredEvent => {
    const event = JSON.parse(row) as StoredEvent;
    freezeJson(event.payload as unknown as JsonValue);
    return event;
  };

  const tail = (runId: string) => {
    const run = runs.get(runId);
    if (!run) return null;
    const last = decode(run.rows[run.rows.length - 1] as string);
    return { workflowId: run.summary.workflowId, lastSeq: last.seq, terminal: isTerminalEvent(last) };
  };

  const apply = (run: MemoryRun, batch: StoredEvent[]) => {
    const { status, step, error, endedAt } = summaryChange(batch, {
      status: () => run.summary.status,
      state: () => lastStateEvent(run.rows.map(decode)),
    });
    for (const event of batch) run.rows.push(JSON.stringify(event));
    const last = batch[batch.length - 1] as StoredEvent;
    run.summary = {
      ...run.summary,
      ...(status === undefined ? {} : { status }),
      ...(step === undefined ? {} : { step }),
      ...(error === undefined ? {} : { error }),
      ...(endedAt === undefined ? {} : { expiresAt: endedAt + run.retentionMS }),
      updatedAt: last.at,
    };
    if (isTerminalEvent(last)) activeByWorkflowId.delete(run.summary.workflowId);
  };

  /** Runs matching a query's filter, in list order (newest first). */
  const inListOrder = (query: Parameters<typeof matchesFilter>[1]) =>
    [...runs.values()]
      .filter((run) => matchesFilter(run.summary, query))
      .sort((a, b) => b.summary.createdAt - a.summary.createdAt || b.position - a.position);

  const live = () => [...runs.values()].filter((run) => isLiveStatus(run.summary.status));

  return {
    lastEvent(runId) {
      const rows = runs.get(runId)?.rows;
      const row = rows?.[rows.length - 1];
      return row === undefined ? null : decode(row);
    },

    createdEvent(runId) {
      const row = runs.get(runId)?.rows[0];
      return row === undefined ? null : decode(row);
    },

    events(runId, afterSeq = 0) {
      const rows = runs.get(runId)?.rows ?? [];
      // seq n is at index n-1: the append rules keep seqs gapless.
      return rows.slice(Math.max(0, afterSeq)).map(decode);
    },

    append(events) {
      const byRun = groupBatch(events);
      // Check every run before writing anything: all-or-nothing.
      for (const [runId, batch] of byRun) {
        const seqTaken = checkRunBatch(runId, tail(runId), batch);
        if (seqTaken) return { appended: false, seqTaken };
      }
      for (const [runId, batch] of byRun) apply(runs.get(runId) as MemoryRun, batch);
      return { appended: true };
    },

    createRunIfNoActive(createdEvent, options = {}) {
      if (createdEvent.type !== "workflow_created" || createdEvent.seq !== 1) {
        throw new PlatformError("internal", "createRunIfNoActive takes the run's workflow_created event with seq 1");
      }
      const activeRunId = activeByWorkflowId.get(createdEvent.workflowId);
      if (activeRunId !== undefined) return { created: false, activeRunId };
      if (runs.has(createdEvent.runId)) return { created: false, seqTaken: { runId: createdEvent.runId, seq: 1 } };
      const following = options.following ?? [];
      const seqTaken = checkRunBatch(
        createdEvent.runId,
        { workflowId: createdEvent.workflowId, lastSeq: 1, terminal: false },
        following,
      );
      if (seqTaken) throw new PlatformError("internal", `The events after workflow_created must start at seq 2`);
      const { version, rerunOf } = createdEvent.payload;
      const run: MemoryRun = {
        position: ++created,
        summary: {
          id: createdEvent.runId,
          workflowId: createdEvent.workflowId,
          name: createdEvent.payload.workflowName,
          status: "running",
          step: "start",
          ...(version === undefined ? {} : { version }),
          ...(rerunOf === undefined ? {} : { rerunOf }),
          createdAt: createdEvent.at,
          updatedAt: createdEvent.at,
        },
        retentionMS: options.retentionMS ?? DEFAULT_RETENTION_MS,
        rows: [],
      };
      runs.set(createdEvent.runId, run);
      activeByWorkflowId.set(createdEvent.workflowId, createdEvent.runId);
      apply(run, [createdEvent, ...following]);
      return { created: true };
    },

    forgetRuns(runIds) {
      for (const runId of runIds) {
        const run = runs.get(runId);
        if (!run) continue;
        runs.delete(runId);
        watchers.delete(runId);
        if (activeByWorkflowId.get(run.summary.workflowId) === runId) activeByWorkflowId.delete(run.summary.workflowId);
      }
    },

    getRun(runId) {
      const run = runs.get(runId);
      return run ? { ...run.summary } : null;
    },

    listRuns(query: RunListQuery): RunListPage {
      const after = query.cursor === undefined ? undefined : decodeListCursor(query.cursor);
      const matching = inListOrder(query).filter((run) =>
        isAfterCursor({ createdAt: run.summary.createdAt, position: run.position }, after),
      );
      const page = matching.slice(0, query.limit);
      const last = page[page.length - 1];
      return {
        runs: page.map((run) => ({ ...run.summary })),
        ...(matching.length > query.limit && last
          ? { cursor: encodeListCursor({ createdAt: last.summary.createdAt, position: last.position }) }
          : {}),
      };
    },

    activeRunIds() {
      return [...activeByWorkflowId.values()].filter((runId) => {
        const status = runs.get(runId)?.summary.status;
        return status !== undefined && isActiveStatus(status);
      });
    },

    matchRunIds(filter, max) {
      const matching = inListOrder(filter);
      return { runIds: matching.slice(0, max).map((run) => run.summary.id), matched: matching.length };
    },

    livePositions() {
      const counts = new Map<string, LivePosition>();
      for (const { summary } of live()) {
        const step = summary.step ?? "start";
        const key = JSON.stringify([summary.name, step]);
        const known = counts.get(key);
        if (known) known.runs++;
        else counts.set(key, { name: summary.name, step, runs: 1 });
      }
      return [...counts.values()];
    },

    liveRunsAt(name, step, limit) {
      return inListOrder({ name, step })
        .filter((run) => isLiveStatus(run.summary.status))
        .slice(0, limit)
        .map((run) => ({ ...run.summary }));
    },

    expiredRunIds(now, limit) {
      return [...runs.values()]
        .filter((run) => run.summary.expiresAt !== undefined && run.summary.expiresAt <= now)
        .sort((a, b) => (a.summary.expiresAt as number) - (b.summary.expiresAt as number))
        .slice(0, limit)
        .map((run) => run.summary.id);
    },

    createBulkOperation(operation, runIds) {
      operations.set(operation.id, {
        operation: { ...operation, affected: 0, done: runIds.length === 0 },
        pending: [...runIds],
      });
    },

    pendingBulkRuns(operationId, limit) {
      return (operations.get(operationId)?.pending ?? []).slice(0, limit);
    },

    settleBulkRuns(operationId, outcomes) {
      const kept = operations.get(operationId);
      if (!kept) return;
      const settled = new Set(outcomes.map((o) => o.runId));
      kept.pending = kept.pending.filter((runId) => !settled.has(runId));
      const affected = kept.operation.affected + outcomes.filter((o) => o.affected).length;
      kept.operation = { ...kept.operation, affected, done: kept.pending.length === 0 };
    },

    bulkOperation(operationId) {
      const kept = operations.get(operationId);
      return kept ? { ...kept.operation } : null;
    },

    unfinishedBulkOperations() {
      return [...operations.values()].filter((kept) => !kept.operation.done).map((kept) => ({ ...kept.operation }));
    },

    watchRun(runId, watcherRunId) {
      const watching = watchers.get(runId) ?? [];
      if (!watching.includes(watcherRunId)) watchers.set(runId, [...watching, watcherRunId]);
    },

    runWatchers(runId) {
      return [...(watchers.get(runId) ?? [])];
    },

    latestRunOf(workflowId) {
      // A Map keeps insertion order: the last run of the id is its newest.
      const run = [...runs.values()].findLast((candidate) => candidate.summary.workflowId === workflowId);
      return run ? { ...run.summary } : null;
    },
  };
}
