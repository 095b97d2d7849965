import { afterEach, describe, expect, it } from "vitest";
import { resetWorkflowsForTests, workflow } from "#src/engine/api/workflowApi.ts";
import { testWorkflow } from "platform/testing";

const START = Date.UTC(2026, 0, 1);

afterEach(() => resetWorkflowsForTests());

describe("run.stream in the test kit", () => {
  it("lists the run's messages in offset order, on the virtual clock, the lifecycle included", async () => {
    workflow("report", {
      start: async (ctx) => {
        ctx.publish("progress", { pct: 50 });
        return { step: "finish", sleepMS: 60_000 };
      },
      finish: async (ctx) => {
        ctx.publish("progress", { pct: 100 });
        return { done: true, result: null };
      },
    });
    const run = await testWorkflow("report", {}, { startAt: START });
    expect(run.stream.map((m) => [m.offset, m.topic, m.data, m.at])).toEqual([
      [0, "run", { type: "step_started", step: "start" }, START],
      [1, "progress", { pct: 50 }, START],
      [2, "run", { type: "step_completed", step: "start", next: "finish" }, START],
      [3, "run", { type: "sleeping", until: START + 60_000 }, START],
      [4, "run", { type: "step_started", step: "finish" }, START + 60_000],
      [5, "progress", { pct: 100 }, START + 60_000],
      [6, "run", { type: "step_completed", step: "finish" }, START + 60_000],
      [7, "run", { type: "ended", status: "completed" }, START + 60_000],
    ]);
  });

  it("shows a waiting run's messages so far, and its end once cancelled", async () => {
    workflow("approval", {
      start: async (ctx) => {
        ctx.publish("status", "asked");
        return { step: "done", waitFor: "approved" };
      },
      done: async () => ({ done: true, result: null }),
    });
    const run = await testWorkflow("approval", {}, { startAt: START });
    expect(run.stream.filter((m) => m.topic === "status").map((m) => m.data)).toEqual(["asked"]);
    expect(run.stream.at(-1)?.data).toEqual({ type: "waiting", event: "approved" });
    await run.cancel("no longer needed");
    expect(run.stream.at(-1)?.data).toEqual({ type: "ended", status: "cancelled" });
  });
});
