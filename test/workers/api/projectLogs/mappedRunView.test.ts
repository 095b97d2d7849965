import { describe, expect, it } from "vitest";
import { withMappedStepErrors } from "#src/workers/api/projectLogs/mappedRunView.ts";

const mapStacks = async (stacks: string[]) =>
  stacks.map((stack) => stack.replaceAll("worker.js:7:3", "src/index.ts:12:11"));

describe("withMappedStepErrors", () => {
  it("maps each failed step's error stack and its causes', and nothing else", async () => {
    const view = {
      id: "r",
      events: [
        { seq: 1, type: "workflow_created", payload: { workflowName: "w", writes: {} } },
        {
          seq: 3,
          type: "step_failed",
          payload: {
            step: "start",
            reason: "kaboom",
            error: {
              name: "Error",
              message: "kaboom",
              stack: "Error: kaboom\n    at start (worker.js:7:3)",
              cause: { name: "TypeError", message: "inner", stack: "TypeError: inner\n    at worker.js:7:3" },
            },
          },
        },
        { seq: 4, type: "step_failed", payload: { step: "start", reason: "timeout" } },
        { seq: 5, type: "step_completed", payload: { step: "start", writes: { note: "worker.js:7:3" } } },
      ],
    };
    const mapped = (await withMappedStepErrors(structuredClone(view), mapStacks)) as typeof view;
    const error = mapped.events[1]!.payload.error!;
    expect(error.stack).toBe("Error: kaboom\n    at start (src/index.ts:12:11)");
    expect(error.cause.stack).toBe("TypeError: inner\n    at src/index.ts:12:11");
    expect(mapped.events[2]).toEqual(view.events[2]);
    expect(mapped.events[3]).toEqual(view.events[3]);
  });

  it("leaves a view without failed steps (or no view) as it is, without asking for a map", async () => {
    let asked = false;
    const never = async (stacks: string[]) => {
      asked = true;
      return stacks;
    };
    expect(await withMappedStepErrors({ events: [] }, never)).toEqual({ events: [] });
    expect(await withMappedStepErrors({ error: { code: "not_found" } }, never)).toEqual({
      error: { code: "not_found" },
    });
    expect(asked).toBe(false);
  });

  it("asks for each stack with the time its step failed: the version that ran then maps it", async () => {
    const asked: (number | undefined)[][] = [];
    const view = {
      events: [
        { seq: 2, at: 1000, type: "step_failed", payload: { error: { stack: "Error: a\n    at worker.js:7:3" } } },
        {
          seq: 5,
          at: 9000,
          type: "step_failed",
          payload: { error: { stack: "Error: b\n    at worker.js:7:3", cause: { stack: "Error: c" } } },
        },
      ],
    };
    await withMappedStepErrors(view, async (stacks, at) => {
      asked.push(at);
      return stacks;
    });
    expect(asked).toEqual([[1000, 9000, 9000]]);
  });
});
