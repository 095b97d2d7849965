import { PlatformError } from "../../core/errors.ts";
import type { StreamBatch } from "./liveRunStream.ts";
import { checkStreamQuery, type StreamMessage } from "./runStream.ts";

/** What a subscription reads: one batch of the run's stream from an offset (a backend's `readStream`). */
export type ReadStreamBatch = (query: { from: number; topics?: string[] }) => Promise<StreamBatch>;

/**
 * `workflow.subscribe(runId, { from?, topics? })`: the run's messages in
 * offset order from `from` (default 0), only `topics` when given, ending
 * after the run's last message once it has ended. Each batch read waits for
 * the next message where the host can (memory, node:sqlite, a run actor while
 * it runs a step); an idle actor answers at once and says when to ask again.
 */
export function subscribeToRun(
  read: ReadStreamBatch,
  runId: string,
  options: { from?: number; topics?: readonly string[] } | undefined,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): AsyncIterable<StreamMessage> {
  if (typeof runId !== "string" || runId === "")
    throw new PlatformError("invalid_input", "workflow.subscribe needs a run id string");
  const query = checkStreamQuery(options, "workflow.subscribe");
  return {
    async *[Symbol.asyncIterator]() {
      let from = query.from;
      for (;;) {
        const batch = await read({ from, ...(query.topics ? { topics: query.topics } : {}) });
        for (const message of batch.messages) {
          from = message.offset + 1;
          yield message;
        }
        if (batch.ended) return;
        if (batch.messages.length === 0 && batch.retryAfterMS !== undefined) await sleep(batch.retryAfterMS);
      }
    },
  };
}
