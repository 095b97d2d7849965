import { PlatformError } from "../core/errors.ts";
import { checkRunBatch, groupBatch, statusAfter } from "./appendRules.ts";
import { isTerminalEvent, type StoredEvent } from "./events.ts";
import { freezeJson, type JsonValue } from "./json.ts";
import {
  decodeListCursor,
  type RunListPage,
  type RunListQuery,
  type RunSummary,
  type WorkflowEventStore,
  type RunIndex,
} from "./store.ts";

interface MemoryRun {
  /** Creation order, from 1; the list cursor. */
  position: number;
  summary: RunSummary;
  /** Events as JSON text, so a stored event can never be mutated through a returned object. */
  rows: string[];
}

export type MemoryEventStore = WorkflowEventStore & RunIndex;

/**
 * An event store in a plain Map with the same rules as the SQLite stores.
 * For unit tests and for running workflows in tests of user code; it
 * forgets everything with the process.
 */
export function createMemoryEventStore(): MemoryEventStore {
  const runs = new Map<string, MemoryRun>();
  const ordered: MemoryRun[] = [];
  const activeByWorkflowId = new Map<string, string>();

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

  return {
    lastEvent(runId) {
      const rows = runs.get(runId)?.rows;
      const row = rows?.[rows.length - 1];
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
      for (const [runId, batch] of byRun) {
        const run = runs.get(runId) as MemoryRun;
        for (const event of batch) run.rows.push(JSON.stringify(event));
        const last = batch[batch.length - 1] as StoredEvent;
        const status = batch.reduce((before, event) => statusAfter(event, before), run.summary.status);
        run.summary = { ...run.summary, status, updatedAt: last.at };
        if (isTerminalEvent(last)) activeByWorkflowId.delete(run.summary.workflowId);
      }
      return { appended: true };
    },

    createRunIfNoActive(created) {
      if (created.type !== "workflow_created" || created.seq !== 1) {
        throw new PlatformError("internal", "createRunIfNoActive takes the run's workflow_created event with seq 1");
      }
      const activeRunId = activeByWorkflowId.get(created.workflowId);
      if (activeRunId !== undefined) return { created: false, activeRunId };
      if (runs.has(created.runId)) return { created: false, seqTaken: { runId: created.runId, seq: 1 } };
      const run: MemoryRun = {
        position: ordered.length + 1,
        summary: {
          id: created.runId,
          workflowId: created.workflowId,
          name: created.payload.workflowName,
          status: statusAfter(created),
          createdAt: created.at,
          updatedAt: created.at,
        },
        rows: [JSON.stringify(created)],
      };
      runs.set(created.runId, run);
      ordered.push(run);
      activeByWorkflowId.set(created.workflowId, created.runId);
      return { created: true };
    },

    getRun(runId) {
      const run = runs.get(runId);
      return run ? { ...run.summary } : null;
    },

    listRuns(query: RunListQuery): RunListPage {
      const before = query.cursor === undefined ? Infinity : decodeListCursor(query.cursor);
      const page: MemoryRun[] = [];
      let more = false;
      for (let i = Math.min(ordered.length, before - 1) - 1; i >= 0; i--) {
        const run = ordered[i] as MemoryRun;
        if (query.name !== undefined && run.summary.name !== query.name) continue;
        if (query.status !== undefined && run.summary.status !== query.status) continue;
        if (page.length === query.limit) {
          more = true;
          break;
        }
        page.push(run);
      }
      const last = page[page.length - 1];
      return {
        runs: page.map((run) => ({ ...run.summary })),
        ...(more && last ? { cursor: String(last.position) } : {}),
      };
    },

    activeRunIds() {
      return [...activeByWorkflowId.values()].filter((runId) => runs.get(runId)?.summary.status === "running");
    },

    latestRunOf(workflowId) {
      const run = ordered.findLast((candidate) => candidate.summary.workflowId === workflowId);
      return run ? { ...run.summary } : null;
    },
  };
}
