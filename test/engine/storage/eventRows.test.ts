import { describe, expect, it } from "vitest";
import type { StoredEvent } from "#src/engine/execution/events.ts";
import { EVENTS_ROW_TYPE, packEventRows, unpackEventRow } from "#src/engine/storage/eventRows.ts";
import { MAX_EVENT_PAYLOAD_BYTES } from "#src/engine/api/json.ts";

const event = (seq: number, type: string, payload: object) =>
  ({ runId: "r", workflowId: "w", seq, type, payload, at: 100 + seq }) as unknown as StoredEvent;

const completed = (seq: number, text = "") => event(seq, "step_completed", { step: "a", writes: { text } });

describe("packEventRows / unpackEventRow: the events of an append in as few rows as fit", () => {
  it.each([
    [
      "one event: its own row, as the spec lays it out",
      [event(2, "step_started", { step: "a", attempt: 1 })],
      [[2, "step_started"]],
    ],
    [
      "a step's end and the next claim: one row keyed by the last seq",
      [completed(3), event(4, "step_started", { step: "b", attempt: 1 })],
      [[4, EVENTS_ROW_TYPE]],
    ],
    [
      "a stretch of ten events: one row",
      Array.from({ length: 10 }, (_, i) => completed(i + 2)),
      [[11, EVENTS_ROW_TYPE]],
    ],
    [
      "two events of 600 KiB each: a row each (a row holds at most 1 MiB)",
      [completed(2, "x".repeat(600 * 1024)), completed(3, "y".repeat(600 * 1024))],
      [
        [2, "step_completed"],
        [3, "step_completed"],
      ],
    ],
    [
      "a big event between small ones: a row of its own, the small ones before it share one",
      [completed(2), completed(3), completed(4, "z".repeat(MAX_EVENT_PAYLOAD_BYTES - 100)), completed(5)],
      [
        [3, EVENTS_ROW_TYPE],
        [4, "step_completed"],
        [5, "step_completed"],
      ],
    ],
  ])("%s", (_case, events, rows) => {
    const packed = packEventRows(events);
    expect(packed.map((row) => [row.seq, row.type])).toEqual(rows);
    // Unpacked, the rows are the events again, in seq order, each field as appended.
    expect(packed.flatMap(unpackEventRow)).toEqual(events);
  });

  it("refuses an event over the payload limit, naming it, as the one-row layout does", () => {
    expect(() => packEventRows([completed(2), completed(3, "x".repeat(MAX_EVENT_PAYLOAD_BYTES))])).toThrow(
      expect.objectContaining({ code: "payload_too_large" }),
    );
  });
});
