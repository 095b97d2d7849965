import { describe, expect, it } from "vitest";
import type { StoredEvent } from "#src/engine/execution/events.ts";
import type { PublishedMessage, StreamMessage } from "#src/engine/streams/runStream.ts";
import { lifecycleTotals, mergeRunStream } from "#src/engine/streams/streamMerge.ts";

const event = (seq: number, type: string, payload: object) =>
  ({ runId: "r", workflowId: "w", seq, type, payload, at: 1000 + seq }) as unknown as StoredEvent;

const published = (afterSeq: number, data: unknown, step = "a", attempt = 1): PublishedMessage => ({
  afterSeq,
  topic: "p",
  json: JSON.stringify(data),
  at: 2000,
  step,
  attempt,
});

/** A run of step a (attempt 1 fails, 2 completes to b), an event sent to it, then b and the end. */
const LOG = [
  event(1, "workflow_created", { workflowName: "w", writes: {} }),
  event(2, "step_started", { step: "a", attempt: 1 }),
  event(3, "step_failed", { step: "a", attempt: 1, reason: "boom", retryable: true }),
  event(4, "step_started", { step: "a", attempt: 2 }),
  event(5, "event_received", { name: "go", payload: null }),
  event(6, "step_completed", { step: "a", writes: {}, next_step: "b" }),
  event(7, "step_started", { step: "b", attempt: 1 }),
  event(8, "step_completed", { step: "b", writes: {} }),
  event(9, "workflow_completed", { result: null }),
];
const PUBLISHED = [
  published(2, "a1 first"),
  published(2, "a1 second"),
  published(4, "a2", "a", 2),
  published(5, "a2 after the event", "a", 2),
  published(7, "b", "b"),
];

const said = (m: StreamMessage) => [m.offset, m.topic, m.data];
const ALL = { from: 0, limit: 1000 };

describe("mergeRunStream: a run's stream from its log and what its steps published", () => {
  it("puts each event's lifecycle first, then what was published while it was the log's last, offsets from 0", () => {
    expect(mergeRunStream(LOG, PUBLISHED, ALL).map(said)).toEqual([
      [0, "run", { type: "step_started", step: "a" }],
      [1, "p", "a1 first"],
      [2, "p", "a1 second"],
      [3, "run", { type: "step_failed", step: "a", reason: "boom", retryable: true }],
      [4, "run", { type: "step_started", step: "a" }],
      [5, "p", "a2"],
      [6, "p", "a2 after the event"],
      [7, "run", { type: "step_completed", step: "a", next: "b" }],
      [8, "run", { type: "step_started", step: "b" }],
      [9, "p", "b"],
      [10, "run", { type: "step_completed", step: "b" }],
      [11, "run", { type: "ended", status: "completed" }],
    ]);
  });

  it.each([
    ["from 5", { from: 5, limit: 1000 }, [5, 6, 7, 8, 9, 10, 11]],
    ["from 5, at most 2", { from: 5, limit: 2 }, [5, 6]],
    ["topic run from 4", { from: 4, topics: ["run"], limit: 1000 }, [4, 7, 8, 10, 11]],
    ["topic p", { from: 0, topics: ["p"], limit: 1000 }, [1, 2, 5, 6, 9]],
    ["past the end", { from: 12, limit: 1000 }, []],
  ])("reads %s", (_case, query, offsets) => {
    expect(mergeRunStream(LOG, PUBLISHED, query).map((m) => m.offset)).toEqual(offsets);
  });

  it("an offset once read keeps its message as the log and the published messages grow (resume: no gap, no duplicate)", () => {
    const seen: StreamMessage[] = [];
    // Replays the run: after each event or publish, a reader resumes from the offset after its last message.
    let events = 0;
    let messages = 0;
    const order = [1, 2, "p", "p", 3, 4, "p", 5, "p", 6, 7, "p", 8, 9];
    for (const step of order) {
      if (step === "p") messages++;
      else events++;
      const from = seen.length === 0 ? 0 : (seen[seen.length - 1] as StreamMessage).offset + 1;
      seen.push(...mergeRunStream(LOG.slice(0, events), PUBLISHED.slice(0, messages), { from, limit: 1000 }));
    }
    expect(seen.map(said)).toEqual(mergeRunStream(LOG, PUBLISHED, ALL).map(said));
  });

  it("counts the lifecycle toward the limits: messages and bytes of data, onto what was counted before", () => {
    expect(lifecycleTotals(LOG.slice(0, 3), { messages: 0, bytes: 0 })).toEqual({
      messages: 2,
      bytes:
        JSON.stringify({ type: "step_started", step: "a" }).length +
        JSON.stringify({ type: "step_failed", step: "a", reason: "boom", retryable: true }).length,
    });
    expect(lifecycleTotals(LOG.slice(3), { messages: 2, bytes: 10 }).messages).toBe(2 + 5);
  });
});
