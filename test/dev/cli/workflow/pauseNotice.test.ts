import { describe, expect, it } from "vitest";
import type { WorkflowRunView } from "#src/engine/execution/describeRun.ts";
import { pauseNotice } from "#src/dev/cli/workflow/pauseNotice.ts";

const t0 = Date.UTC(2026, 10, 22, 10, 0, 0);
const run = (extra: Partial<WorkflowRunView>): WorkflowRunView => ({
  id: "3f2a9c1d-aaaa",
  workflowId: "bob-1",
  name: "approve",
  status: "running",
  createdAt: t0,
  updatedAt: t0,
  events: [],
  ...extra,
});

describe("what start --wait says while a run is paused", () => {
  it.each([
    [
      "a wait for an event, without a timeout",
      run({ waitingFor: { name: "approval" } }),
      'Waiting for the event "approval": send it with `platform workflow send bob-1 approval [--data JSON]`.',
    ],
    [
      "a wait for an event, with its timeout",
      run({ waitingFor: { name: "approval", timeoutAt: t0 + 3_600_000 } }),
      'Waiting for the event "approval" (until 2026-11-22T11:00:00Z): send it with `platform workflow send bob-1 approval [--data JSON]`.',
    ],
    ["a sleep", run({ wakeAt: t0 + 5_000 }), "Sleeping until 2026-11-22T10:00:05Z."],
    ["a run between steps", run({}), null],
    ["a finished run", run({ status: "completed", waitingFor: { name: "approval" } }), null],
  ])("%s", (_label, view, expected) => {
    expect(pauseNotice(view, "bob-1")).toBe(expected);
  });
});
