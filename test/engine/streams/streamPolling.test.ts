import { describe, expect, it } from "vitest";
import type { StoredEvent } from "#src/engine/execution/events.ts";
import type { RunStatus } from "#src/engine/execution/runSummary.ts";
import { streamPollDelayMS } from "#src/engine/streams/streamPolling.ts";

const NOW = 1_000_000;
const event = (type: string, payload: object) =>
  ({ runId: "r", workflowId: "w", seq: 3, type, payload, at: NOW }) as unknown as StoredEvent;

describe("streamPollDelayMS: when a reader of a run no execution drives asks its actor again", () => {
  it.each<[string, RunStatus, StoredEvent | null, number]>([
    [
      "a sleep due in 5 s: when it is due",
      "running",
      event("step_completed", { step: "a", wake_at: NOW + 5000 }),
      5000,
    ],
    [
      "a sleep due in a day: 30 s on",
      "running",
      event("step_completed", { step: "a", wake_at: NOW + 86_400_000 }),
      30_000,
    ],
    ["a sleep already due: 1 s on", "running", event("step_completed", { step: "a", wake_at: NOW - 10 }), 1000],
    ["a wait for an event: 30 s", "running", event("step_completed", { step: "a", waiting_for: "go" }), 30_000],
    [
      "a wait for an event that times out in 2 s: then",
      "running",
      event("step_completed", { step: "a", waiting_for: "go", timeout_at: NOW + 2000 }),
      2000,
    ],
    ["a wait for a run: 30 s", "running", event("step_completed", { step: "a", waiting_for_run: "r2" }), 30_000],
    ["a retry asked for in 8 s: then", "running", event("step_failed", { step: "a", retry_at: NOW + 8000 }), 8000],
    ["a retry on the backoff: 1 s", "running", event("step_failed", { step: "a", attempt: 1 }), 1000],
    ["a next step about to be claimed: 1 s", "running", event("step_completed", { step: "a", next_step: "b" }), 1000],
    ["an event just sent to a waiting run: 1 s", "running", event("event_received", { name: "go" }), 1000],
    ["a paused run: 30 s", "paused", event("workflow_paused", {}), 30_000],
    ["a queued run: 30 s", "queued", event("workflow_created", {}), 30_000],
    ["a parent waiting for its children: 30 s", "waiting", event("step_completed", { step: "a" }), 30_000],
  ])("%s", (_case, status, last, expected) => {
    expect(streamPollDelayMS(status, last, NOW)).toBe(expected);
  });
});
