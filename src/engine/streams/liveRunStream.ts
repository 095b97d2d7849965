import { PlatformError } from "../../core/errors.ts";
import { freezeJson, type JsonValue } from "../api/json.ts";
import type { StoredEvent } from "../execution/events.ts";
import type { LegacyRunStreams } from "./legacySqlRunStream.ts";
import { lifecycleMessagesOf } from "./lifecycleMessages.ts";
import {
  checkStreamRoom,
  type RunStreamStore,
  type StreamMessage,
  type StreamMessageInput,
  type StreamQuery,
  type StreamTotals,
} from "./runStream.ts";
import { lifecycleTotals, mergeRunStream } from "./streamMerge.ts";
import type { WorkflowEventStore } from "../storage/store.ts";

/** One read of a run's stream: its messages from the offset asked for, and whether the stream is over. */
export interface StreamBatch {
  messages: StreamMessage[];
  /** The run has ended and these are its last matching messages: nothing more will come. */
  ended: boolean;
  /** Set when the host answered at once with nothing new: ask again after this long (an idle run's actor). */
  retryAfterMS?: number;
}

/** How long one read may wait for a message before answering empty (the reader asks again). */
export const STREAM_WAIT_SLICE_MS = 20_000;
/** Messages per read at most. */
export const STREAM_BATCH_LIMIT = 500;

/**
 * A backend's streams as its readers see them: what steps published merged
 * with the lifecycle messages of the run's log (streamMerge.ts), plus the
 * readers of each run waiting in this process, woken by each publish and
 * each appended event (so a message reaches them as it is published, not
 * when its step ends).
 */
export interface LiveRunStream {
  /** Appends (checked) and wakes the run's waiting readers. */
  publish(runId: string, message: StreamMessageInput): StreamMessage;
  /**
   * An event was appended: its lifecycle messages (topic `run`) are read from
   * the log, so this only wakes the run's readers (a run in the legacy
   * layout stores them, and past its limits drops them). Never throws.
   */
  publishLifecycle(event: StoredEvent): void;
  /** The run's messages matching `query`, in offset order, at most `query.limit`. */
  messages(runId: string, query: StreamQuery): StreamMessage[];
  /**
   * Reads a batch from `query.from`. `ended` tells the run's status read before
   * the messages, so no message can follow an ended batch. With nothing to
   * answer and `waitMS` > 0, waits until a publish (or `waitMS`) first.
   * `status` answers null for a run that does not exist: `not_found`.
   */
  read(
    runId: string,
    query: Omit<StreamQuery, "limit">,
    status: () => "live" | "ended" | null,
    waitMS: number,
  ): Promise<StreamBatch>;
  forgetRuns(runIds: readonly string[]): void;
}

/** What the streams read of the runs' logs. */
export type StreamLog = Pick<WorkflowEventStore, "events">;

/**
 * `legacy`: where runs that began before the lifecycle was read from the log
 * keep their streams (a run actor's or a node:sqlite file's old table).
 */
export function createLiveRunStream(store: RunStreamStore, log: StreamLog, legacy?: LegacyRunStreams): LiveRunStream {
  const inLegacy = (runId: string) => legacy?.holds(runId) === true;
  /** Per run, the lifecycle messages' totals up to a seq: a publish's offset and room without reading the whole log again. */
  const lifecycleOf = new Map<string, { seq: number; totals: StreamTotals }>();
  const lifecycleUpToNow = (runId: string): StreamTotals => {
    const known = lifecycleOf.get(runId) ?? { seq: 0, totals: { messages: 0, bytes: 0 } };
    const arrived = log.events(runId, known.seq);
    const last = arrived[arrived.length - 1];
    const now = last ? { seq: last.seq, totals: lifecycleTotals(arrived, known.totals) } : known;
    lifecycleOf.set(runId, now);
    return now.totals;
  };
  const messages = (runId: string, query: StreamQuery): StreamMessage[] =>
    legacy && inLegacy(runId)
      ? legacy.read(runId, query)
      : mergeRunStream(log.events(runId), store.published(runId), query);
  const waiting = new Map<string, Set<() => void>>();
  const wake = (runId: string) => {
    const wakers = waiting.get(runId);
    if (!wakers) return;
    waiting.delete(runId);
    for (const waker of wakers) waker();
  };
  const until = (runId: string, waitMS: number) =>
    new Promise<void>((resolve) => {
      const wakers = waiting.get(runId) ?? new Set<() => void>();
      const done = () => {
        clearTimeout(timer);
        wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, waitMS);
      wakers.add(done);
      waiting.set(runId, wakers);
    });
  const batch = (runId: string, query: Omit<StreamQuery, "limit">, status: () => "live" | "ended" | null) => {
    const state = status();
    if (state === null) throw new PlatformError("not_found", `Workflow run "${runId}" does not exist`);
    const found = messages(runId, { ...query, limit: STREAM_BATCH_LIMIT });
    return { messages: found, ended: state === "ended" && found.length < STREAM_BATCH_LIMIT };
  };
  return {
    publish(runId, message) {
      if (legacy && inLegacy(runId)) {
        const stored = legacy.append(runId, message);
        wake(runId);
        return stored;
      }
      // The lifecycle counts toward the limits too: together they are the offset this message takes.
      const lifecycle = lifecycleUpToNow(runId);
      const published = store.totals(runId);
      const before = { messages: lifecycle.messages + published.messages, bytes: lifecycle.bytes + published.bytes };
      checkStreamRoom(before, message, runId);
      store.append(runId, { ...message, afterSeq: lifecycleOf.get(runId)?.seq ?? 0 });
      wake(runId);
      const { json, ...rest } = message;
      return Object.freeze({ ...rest, offset: before.messages, data: freezeJson(JSON.parse(json) as JsonValue) });
    },
    publishLifecycle(event) {
      if (legacy && inLegacy(event.runId)) {
        try {
          for (const message of lifecycleMessagesOf(event)) legacy.append(event.runId, message);
        } catch {
          // A full stream: the run's own progress matters more than its report.
        }
      }
      wake(event.runId);
    },
    messages,
    async read(runId, query, status, waitMS) {
      const first = batch(runId, query, status);
      if (first.messages.length > 0 || first.ended || waitMS <= 0) return first;
      await until(runId, waitMS);
      return batch(runId, query, status);
    },
    forgetRuns(runIds) {
      store.forgetRuns(runIds);
      legacy?.forgetRuns(runIds);
      for (const runId of runIds) lifecycleOf.delete(runId);
    },
  };
}
