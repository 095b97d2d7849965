import { freezeJson, utf8ByteLength, type JsonValue } from "./json.ts";
import { checkStreamRoom, type RunStreamStore, type StreamMessage } from "./runStream.ts";

/** Runs' streams in a Map, with the SQL store's rules: for the memory backend and the test kit. */
export function createMemoryRunStream(): RunStreamStore {
  const streams = new Map<string, { messages: StreamMessage[]; bytes: number }>();
  return {
    append(runId, input) {
      const stream = streams.get(runId) ?? { messages: [], bytes: 0 };
      checkStreamRoom({ messages: stream.messages.length, bytes: stream.bytes }, input, runId);
      const { json, ...rest } = input;
      const message: StreamMessage = Object.freeze({
        ...rest,
        offset: stream.messages.length,
        data: freezeJson(JSON.parse(json) as JsonValue),
      });
      stream.messages.push(message);
      stream.bytes += utf8ByteLength(json);
      streams.set(runId, stream);
      return message;
    },
    read(runId, { from, topics, limit }) {
      const messages = streams.get(runId)?.messages ?? [];
      const wanted: StreamMessage[] = [];
      for (let offset = from; offset < messages.length && wanted.length < limit; offset++) {
        const message = messages[offset] as StreamMessage;
        if (!topics || topics.includes(message.topic)) wanted.push(message);
      }
      return wanted;
    },
    forgetRuns(runIds) {
      for (const runId of runIds) streams.delete(runId);
    },
  };
}
