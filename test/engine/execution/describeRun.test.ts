import { describe, expect, it } from "vitest";
import { describeRun } from "#src/engine/execution/describeRun.ts";
import { logBuilder } from "#test/support/workflow/index.ts";

const T0 = 1_700_000_000_000;

describe("describeRun: the workflow.get shape", () => {
  it("a running run: status running, no result or error, events as {seq, type, payload, at}", () => {
    const log = logBuilder("r1", "order-42")
      .created("greet", { name: "Ada" }, T0)
      .add("step_started", { step: "start", attempt: 1 }, T0 + 5);
    expect(describeRun(log.events)).toEqual({
      id: "r1",
      workflowId: "order-42",
      name: "greet",
      status: "running",
      step: "start",
      createdAt: T0,
      updatedAt: T0 + 5,
      events: [
        {
          seq: 1,
          type: "workflow_created",
          payload: { workflowName: "greet", writes: { data: { name: "Ada" } } },
          at: T0,
        },
        { seq: 2, type: "step_started", payload: { step: "start", attempt: 1 }, at: T0 + 5 },
      ],
    });
  });

  it("a completed run carries its result", () => {
    const log = logBuilder("r1")
      .created("greet")
      .add("workflow_completed", { result: { hello: "Ada" } }, T0 + 9);
    expect(describeRun(log.events)).toMatchObject({ status: "completed", result: { hello: "Ada" }, updatedAt: T0 + 9 });
    expect(describeRun(log.events)).not.toHaveProperty("error");
  });

  it("a failed run carries its failure reason as error", () => {
    const log = logBuilder("r1")
      .created("greet")
      .add("workflow_failed", { reason: "card declined", cause: "non_retryable" });
    expect(describeRun(log.events)).toMatchObject({ status: "failed", error: "card declined" });
    expect(describeRun(log.events)).not.toHaveProperty("result");
  });

  it("serves each payload exactly as stored and, beside a step_completed's, its decoded continuation", () => {
    const log = logBuilder("r1")
      .created("remind", null, T0)
      .add("step_started", { step: "start", attempt: 1 }, T0 + 1)
      .add("step_completed", { step: "start", writes: { n: 1 }, next_step: "nudge", wake_at: T0 + 500 }, T0 + 2)
      .add("step_started", { step: "nudge", attempt: 1 }, T0 + 500)
      .add("step_completed", { step: "nudge", writes: {}, next_step: "approved", waiting_for: "approval" }, T0 + 501);
    const view = describeRun(log.events);
    expect(view?.events.map((event) => ("continuation" in event ? event.continuation : null))).toEqual([
      null,
      null,
      { kind: "sleep", step: "nudge", until: T0 + 500 },
      null,
      { kind: "wait_for_event", step: "approved", event: "approval" },
    ]);
    expect(view?.events[2]).toEqual({
      seq: 3,
      type: "step_completed",
      payload: { step: "start", writes: { n: 1 }, next_step: "nudge", wake_at: T0 + 500 },
      continuation: { kind: "sleep", step: "nudge", until: T0 + 500 },
      at: T0 + 2,
    });
    // The run's current pause, from the same decoding.
    expect(view).toMatchObject({ waitingFor: { name: "approval" } });
    expect(view).not.toHaveProperty("wakeAt");
  });

  it("an empty log is no run", () => {
    expect(describeRun([])).toBeNull();
  });
});
