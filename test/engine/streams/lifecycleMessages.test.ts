import { describe, expect, it } from "vitest";
import type { StoredEvent } from "#src/engine/execution/events.ts";
import { lifecycleMessagesOf } from "#src/engine/streams/lifecycleMessages.ts";

const event = (type: string, payload: object) =>
  ({ runId: "r", workflowId: "w", seq: 2, type, payload, at: 1000 }) as unknown as StoredEvent;

describe("lifecycleMessagesOf: what topic run says of each event", () => {
  it.each([
    ["step_started", event("step_started", { step: "a", attempt: 3 }), [[{ type: "step_started", step: "a" }, "a", 3]]],
    [
      "step_failed",
      event("step_failed", { step: "a", attempt: 2, reason: "boom", retryable: true }),
      [[{ type: "step_failed", step: "a", reason: "boom", retryable: true }, "a", 2]],
    ],
    [
      "step_completed (last step)",
      event("step_completed", { step: "a", writes: {} }),
      [[{ type: "step_completed", step: "a" }, "a", 0]],
    ],
    [
      "step_completed with a sleep",
      event("step_completed", { step: "a", writes: {}, next_step: "b", wake_at: 5000 }),
      [
        [{ type: "step_completed", step: "a", next: "b" }, "a", 0],
        [{ type: "sleeping", until: 5000 }, "a", 0],
      ],
    ],
    [
      "step_completed with a wait for an event",
      event("step_completed", { step: "a", writes: {}, next_step: "b", waiting_for: "approval", timeout_at: 9000 }),
      [
        [{ type: "step_completed", step: "a", next: "b" }, "a", 0],
        [{ type: "waiting", event: "approval", timeoutAt: 9000 }, "a", 0],
      ],
    ],
    [
      "step_completed with a wait for a run",
      event("step_completed", { step: "a", writes: {}, next_step: "b", waiting_for_run: "other" }),
      [
        [{ type: "step_completed", step: "a", next: "b" }, "a", 0],
        [{ type: "waiting", run: "other" }, "a", 0],
      ],
    ],
    [
      "workflow_completed",
      event("workflow_completed", { result: 1 }),
      [[{ type: "ended", status: "completed" }, "", 0]],
    ],
    [
      "workflow_failed",
      event("workflow_failed", { reason: "x", cause: {} }),
      [[{ type: "ended", status: "failed" }, "", 0]],
    ],
    [
      "workflow_cancelled",
      event("workflow_cancelled", { reason: "x" }),
      [[{ type: "ended", status: "cancelled" }, "", 0]],
    ],
    ["event_received", event("event_received", { name: "go", payload: null }), []],
    ["workflow_paused", event("workflow_paused", { reason: "x" }), []],
  ])("%s", (_case, stored, expected) => {
    const messages = lifecycleMessagesOf(stored);
    expect(messages.map((m) => [JSON.parse(m.json), m.step, m.attempt])).toEqual(expected);
    expect(messages.every((m) => m.topic === "run" && m.at === 1000)).toBe(true);
  });
});
