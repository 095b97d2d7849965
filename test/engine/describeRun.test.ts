import { describe, expect, it } from "vitest";
import { describeRun } from "#src/engine/describeRun.ts";
import { logBuilder } from "../support/node/index.ts";

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

  it("an empty log is no run", () => {
    expect(describeRun([])).toBeNull();
  });
});
