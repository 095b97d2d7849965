import type { StoredEvent } from "../execution/events.ts";
import { encodePayload, MAX_EVENT_PAYLOAD_BYTES, utf8ByteLength } from "../api/json.ts";

/** One row of `_workflow_events`: a single event, or (type {@link EVENTS_ROW_TYPE}) several that were appended together. */
export type EventRow = { run_id: string; seq: number; workflow_id: string; type: string; payload: string; at: number };

/**
 * The type of a row that holds consecutive events of one append: its `seq`
 * is the last of them, its payload a JSON array of `{ type, at, payload }`
 * in seq order (the first is `seq` − length + 1), its `at` the last one's.
 * Keyed by the last seq, the rows a reader needs after a seq are exactly
 * those with a greater key.
 */
export const EVENTS_ROW_TYPE = "events";

/** A packed row's JSON at most: well under the 2 MB a Durable Object's SQLite row may hold. */
const MAX_PACKED_ROW_BYTES = MAX_EVENT_PAYLOAD_BYTES;

function singleRow(event: StoredEvent, payload: string): EventRow {
  return {
    run_id: event.runId,
    seq: event.seq,
    workflow_id: event.workflowId,
    type: event.type,
    payload,
    at: event.at,
  };
}

/**
 * The rows of an append (one run's consecutive events): consecutive events
 * packed into rows of at most 1 MiB of JSON; a row of one event is written
 * as that event's own row. Checks every payload's limit first.
 */
export function packEventRows(events: readonly StoredEvent[]): EventRow[] {
  const rows: EventRow[] = [];
  let group: { event: StoredEvent; payload: string; entry: string }[] = [];
  let bytes = 0;
  const close = () => {
    const last = group[group.length - 1];
    if (!last) return;
    rows.push(
      group.length === 1
        ? singleRow(last.event, last.payload)
        : { ...singleRow(last.event, ""), type: EVENTS_ROW_TYPE, payload: `[${group.map((g) => g.entry).join(",")}]` },
    );
    group = [];
    bytes = 0;
  };
  for (const event of events) {
    const payload = encodePayload(event.payload, `${event.type} payload`);
    const entry = `{"type":${JSON.stringify(event.type)},"at":${event.at},"payload":${payload}}`;
    const size = utf8ByteLength(entry) + 1;
    if (group.length > 0 && bytes + size > MAX_PACKED_ROW_BYTES) close();
    group.push({ event, payload, entry });
    bytes += size;
  }
  close();
  return rows;
}

/** The events a row holds, in seq order. */
export function unpackEventRow(row: EventRow): StoredEvent[] {
  if (row.type !== EVENTS_ROW_TYPE)
    return [
      {
        runId: row.run_id,
        workflowId: row.workflow_id,
        seq: row.seq,
        type: row.type,
        payload: JSON.parse(row.payload),
        at: row.at,
      } as StoredEvent,
    ];
  const entries = JSON.parse(row.payload) as { type: string; at: number; payload: object }[];
  const first = row.seq - entries.length + 1;
  return entries.map(
    (entry, i) =>
      ({
        runId: row.run_id,
        workflowId: row.workflow_id,
        seq: first + i,
        type: entry.type,
        payload: entry.payload,
        at: entry.at,
      }) as StoredEvent,
  );
}
