import { PlatformError } from "../core/errors.ts";
import type { StoredEvent } from "./events.ts";
import { lifecycleMessagesOf } from "./lifecycleMessages.ts";
import type { RunStreamStore, StreamMessage, StreamMessageInput, StreamQuery } from "./runStream.ts";

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
 * A backend's streams as its readers see them: the store, plus the readers
 * of each run waiting in this process, woken by each publish (so a message
 * reaches them as it is published, not when its step ends).
 */
export interface LiveRunStream {
  /** Appends (checked) and wakes the run's waiting readers. */
  publish(runId: string, message: StreamMessageInput): StreamMessage;
  /**
   * The lifecycle messages of an appended event (topic `run`). Never throws:
   * past the stream's limits they are dropped, the run goes on, and readers still learn of its end.
   */
  publishLifecycle(event: StoredEvent): void;
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

export function createLiveRunStream(store: RunStreamStore): LiveRunStream {
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
    const messages = store.read(runId, { ...query, limit: STREAM_BATCH_LIMIT });
    return { messages, ended: state === "ended" && messages.length < STREAM_BATCH_LIMIT };
  };
  return {
    publish(runId, message) {
      const stored = store.append(runId, message);
      wake(runId);
      return stored;
    },
    publishLifecycle(event) {
      try {
        for (const message of lifecycleMessagesOf(event)) store.append(event.runId, message);
      } catch {
        // A full stream: the run's own progress matters more than its report.
      }
      wake(event.runId);
    },
    async read(runId, query, status, waitMS) {
      const first = batch(runId, query, status);
      if (first.messages.length > 0 || first.ended || waitMS <= 0) return first;
      await until(runId, waitMS);
      return batch(runId, query, status);
    },
    forgetRuns(runIds) {
      store.forgetRuns(runIds);
    },
  };
}
