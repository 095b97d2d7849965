import { freezeJson, utf8ByteLength, type JsonValue } from "../api/json.ts";
import type { StoredEvent } from "../execution/events.ts";
import { lifecycleMessagesOf } from "./lifecycleMessages.ts";
import type { PublishedMessage, StreamMessage, StreamMessageInput, StreamQuery, StreamTotals } from "./runStream.ts";

/**
 * A run's stream as readers see it, from its log and what its steps
 * published, the messages matching `query` in offset order. The order is
 * defined so offsets never move: each event's lifecycle messages in seq
 * order, and after them the messages published while that event was the
 * log's last (`afterSeq`), in publish order. A new event or publish always
 * lands after everything there is, so an offset once read names the same
 * message for good (Last-Event-ID resumes with no gap and no duplicate).
 */
export function mergeRunStream(
  events: readonly StoredEvent[],
  published: readonly PublishedMessage[],
  { from, topics, limit }: StreamQuery,
): StreamMessage[] {
  const wanted: StreamMessage[] = [];
  let offset = 0;
  const add = ({ json, ...rest }: StreamMessageInput) => {
    // Only the messages asked for are parsed: a reader resuming late skips the rest for a count.
    if (offset >= from && wanted.length < limit && (!topics || topics.includes(rest.topic)))
      wanted.push(Object.freeze({ ...rest, offset, data: freezeJson(JSON.parse(json) as JsonValue) }));
    offset++;
  };
  let next = 0;
  const publishedBefore = (seq: number) => {
    for (; next < published.length && (published[next] as PublishedMessage).afterSeq < seq; next++) {
      const { afterSeq: _placed, ...message } = published[next] as PublishedMessage;
      add(message);
    }
  };
  for (const event of events) {
    if (wanted.length >= limit) break;
    publishedBefore(event.seq);
    for (const message of lifecycleMessagesOf(event)) add(message);
  }
  publishedBefore(Number.POSITIVE_INFINITY);
  return wanted;
}

/** The lifecycle messages of `events` counted onto `totals`, with their bytes of data: their share of the stream's limits. */
export function lifecycleTotals(events: readonly StoredEvent[], totals: StreamTotals): StreamTotals {
  let { messages, bytes } = totals;
  for (const event of events)
    for (const message of lifecycleMessagesOf(event)) {
      messages++;
      bytes += utf8ByteLength(message.json);
    }
  return { messages, bytes };
}
