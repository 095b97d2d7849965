import { utf8ByteLength } from "../api/json.ts";
import type { PublishedMessage, RunStreamStore, StreamTotals } from "./runStream.ts";

/** What runs' steps published, in a Map: for the memory backend and the test kit. */
export function createMemoryRunStream(): RunStreamStore {
  const streams = new Map<string, { messages: PublishedMessage[]; totals: StreamTotals }>();
  return {
    append(runId, message) {
      const stream = streams.get(runId) ?? { messages: [], totals: { messages: 0, bytes: 0 } };
      stream.messages.push(Object.freeze({ ...message }));
      stream.totals.messages++;
      stream.totals.bytes += utf8ByteLength(message.json);
      streams.set(runId, stream);
    },
    published(runId) {
      return [...(streams.get(runId)?.messages ?? [])];
    },
    totals(runId) {
      return { ...(streams.get(runId)?.totals ?? { messages: 0, bytes: 0 }) };
    },
    forgetRuns(runIds) {
      for (const runId of runIds) streams.delete(runId);
    },
  };
}
