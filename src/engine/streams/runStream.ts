import { PlatformError } from "../../core/errors.ts";
import { toJsonValue, utf8ByteLength, type JsonValue } from "../api/json.ts";

/**
 * A run's live output stream (beyond the spec): messages a step publishes
 * with `ctx.publish(topic, data)`, plus the platform's own lifecycle messages
 * on topic `run`. What steps publish is kept with the run, beside its event
 * log; the lifecycle messages are read from the log itself. Read in offset
 * order from any offset. At-least-once, like steps: a message
 * of an attempt that later fails stays, marked with its attempt.
 * @example
 * // in a step: ctx.publish("progress", { pct: 10 });
 * for await (const message of workflow.subscribe(runId)) console.log(message.offset, message.topic, message.data);
 */
export interface StreamMessage {
  /** From 0, one more per message of the run. */
  readonly offset: number;
  readonly topic: string;
  readonly data: JsonValue;
  /** Epoch ms. */
  readonly at: number;
  /** The step that published it (for a lifecycle message, the step it is about; "" for the run itself). */
  readonly step: string;
  /** The attempt that published it (0 for a lifecycle message not about an attempt). */
  readonly attempt: number;
}

/** What a publisher hands the store; the store gives it its offset. */
export type StreamMessageInput = Omit<StreamMessage, "offset" | "data"> & {
  /** The data as checked JSON text (see {@link encodeStreamData}). */
  readonly json: string;
};

/** A topic: 1-64 characters of `a-z`, `0-9`, `_`, `.`, `-`. */
export const STREAM_TOPIC = /^[a-z0-9_.-]{1,64}$/;
/** Largest data of one message, in UTF-8 bytes of its JSON. */
export const MAX_STREAM_MESSAGE_BYTES = 64 * 1024;
/** At most this many messages per run. */
export const MAX_STREAM_MESSAGES = 10_000;
/** At most this many bytes of data per run. */
export const MAX_STREAM_BYTES = 10 * 1024 * 1024;
/** The topic the platform publishes a run's lifecycle on. */
export const LIFECYCLE_TOPIC = "run";

/** Refuses a topic that is not 1-64 characters of `[a-z0-9_.-]`. */
export function checkTopic(topic: unknown, what: string): string {
  if (typeof topic !== "string" || !STREAM_TOPIC.test(topic))
    throw new PlatformError(
      "invalid_input",
      `${what}: the topic ${JSON.stringify(topic) ?? String(topic)} is not 1-64 characters of a-z, 0-9, "_", "." or "-"`,
    );
  return topic;
}

/** The data as JSON text, checked against the strict JSON rule and the 64 KiB limit. */
export function encodeStreamData(data: unknown, what: string): string {
  const json = JSON.stringify(toJsonValue(data === undefined ? null : data, what));
  const bytes = utf8ByteLength(json);
  if (bytes > MAX_STREAM_MESSAGE_BYTES)
    throw new PlatformError(
      "invalid_input",
      `${what} is ${bytes} bytes of JSON; a stream message holds at most ${MAX_STREAM_MESSAGE_BYTES} (64 KiB)`,
    );
  return json;
}

/** Refuses a message that would take the run's stream past 10,000 messages or 10 MiB. */
export function checkStreamRoom(
  totals: { messages: number; bytes: number },
  message: StreamMessageInput,
  runId: string,
): void {
  if (totals.messages >= MAX_STREAM_MESSAGES)
    throw new PlatformError(
      "invalid_input",
      `The stream of run "${runId}" holds ${MAX_STREAM_MESSAGES} messages, its limit; message on topic "${message.topic}" not published`,
    );
  const bytes = utf8ByteLength(message.json);
  if (totals.bytes + bytes > MAX_STREAM_BYTES)
    throw new PlatformError(
      "invalid_input",
      `The stream of run "${runId}" would pass its limit of ${MAX_STREAM_BYTES} bytes (10 MiB) of data; message on topic "${message.topic}" not published`,
    );
}

/** Which messages a read wants: offsets from `from` on, only these topics when given. */
export interface StreamQuery {
  from: number;
  topics?: readonly string[];
  /** At most this many; the store may answer fewer. */
  limit: number;
}

/**
 * A message a step published, as kept. `afterSeq` is the seq of the run's
 * last event when it was published: a reader places it after that event's
 * lifecycle messages (streamMerge.ts), so the
 * lifecycle is read from the log and never stored twice.
 */
export interface PublishedMessage extends StreamMessageInput {
  readonly afterSeq: number;
}

/**
 * Where a backend keeps what its runs' steps publish. Synchronous, as the
 * event stores are (memory, node:sqlite, a run actor's SQLite): a publish is
 * written when it returns.
 */
export interface RunStreamStore {
  /** Appends after the run's other published messages (the caller checked the limits). */
  append(runId: string, message: PublishedMessage): void;
  /** The run's published messages, in the order they were published. */
  published(runId: string): PublishedMessage[];
  /** How many messages the run has published and their bytes of data. */
  totals(runId: string): StreamTotals;
  /** Retention: drops these runs' streams with their events. */
  forgetRuns(runIds: readonly string[]): void;
}

export interface StreamTotals {
  messages: number;
  bytes: number;
}

/** Offsets and topics a reader may ask for, checked; `what` names the call in errors. */
export function checkStreamQuery(
  options: { from?: unknown; topics?: unknown } | undefined,
  what: string,
): { from: number; topics?: string[] } {
  const from = options?.from ?? 0;
  if (typeof from !== "number" || !Number.isSafeInteger(from) || from < 0)
    throw new PlatformError("invalid_input", `${what}: from must be an offset (an integer ≥ 0), not ${String(from)}`);
  const topics = options?.topics;
  if (topics === undefined) return { from };
  if (!Array.isArray(topics) || topics.length === 0 || topics.length > 20)
    throw new PlatformError("invalid_input", `${what}: topics must be a list of 1-20 topics`);
  return { from, topics: topics.map((topic) => checkTopic(topic, what)) };
}

/** An offset as text (a query's `from`, an SSE `Last-Event-ID`, the CLI's `--from`): digits, no sign, no leading zero. */
export const OFFSET_TEXT = /^(0|[1-9][0-9]{0,14})$/;

/** A read's query from a URL (`?from=N&topic=a&topic=b`): the internal stream routes' and the CLI's. */
export function streamQueryOfSearch(params: URLSearchParams, what: string): { from: number; topics?: string[] } {
  const from = params.get("from");
  if (from !== null && !OFFSET_TEXT.test(from))
    throw new PlatformError("invalid_input", `${what}: from must be an offset (an integer ≥ 0), not "${from}"`);
  const topics = params.getAll("topic");
  return checkStreamQuery({ from: from === null ? 0 : Number(from), ...(topics.length ? { topics } : {}) }, what);
}
