import { describe, expect, it } from "vitest";
import { errorText, stepErrors } from "#src/console/public/console/stepErrorsView.js";

describe("a run's failed attempts", () => {
  const view = {
    events: [
      { type: "workflow_created", payload: { workflowName: "w" } },
      { type: "step_failed", payload: { step: "start", attempt: 1, reason: "timeout", retryable: true } },
      {
        type: "step_failed",
        payload: {
          step: "start",
          attempt: 2,
          reason: "kaboom",
          error: {
            name: "Error",
            message: "kaboom",
            stack: "Error: kaboom\n    at start (src/index.ts:12:11)\n    at run (src/engine.ts:1:1)",
            cause: { name: "TypeError", message: "inner", stack: "TypeError: inner\n    at helper (src/util.ts:3:5)" },
          },
        },
      },
    ],
  };

  it("lists each failed attempt with what it threw", () => {
    expect(
      stepErrors(view).map(({ step, attempt, reason, error }) => [step, attempt, reason, error?.name ?? null]),
    ).toEqual([
      ["start", 1, "timeout", null],
      ["start", 2, "kaboom", "Error"],
    ]);
  });

  it("shows an error's frames and its causes", () => {
    expect(errorText(stepErrors(view)[1]!.error!)).toBe(
      [
        "Error: kaboom",
        "    at start (src/index.ts:12:11)",
        "    at run (src/engine.ts:1:1)",
        "Caused by: TypeError: inner",
        "    at helper (src/util.ts:3:5)",
      ].join("\n"),
    );
  });
});
