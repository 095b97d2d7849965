import { describe, expect, it } from "vitest";
import type { WorkflowRunView } from "#src/engine/execution/describeRun.ts";
import { formatFailedAttempts } from "#src/dev/cli/workflow/failedAttempts.ts";

const run = (events: unknown[]) =>
  ({ id: "r", workflowId: "r", name: "w", status: "failed", createdAt: 0, updatedAt: 0, events }) as WorkflowRunView;

describe("workflow get: failed attempts beneath the timeline", () => {
  it("prints each attempt that threw, its error and its frames", () => {
    const text = formatFailedAttempts(
      run([
        {
          seq: 3,
          type: "step_failed",
          at: 1,
          payload: { step: "start", attempt: 1, reason: "timeout", retryable: true },
        },
        {
          seq: 5,
          type: "step_failed",
          at: 2,
          payload: {
            step: "start",
            attempt: 2,
            reason: "kaboom",
            retryable: false,
            error: { name: "Error", message: "kaboom", stack: "Error: kaboom\n    at start (src/index.ts:12:11)" },
          },
        },
      ]),
    );
    expect(text).toBe("\nFailed attempts:\n  start#2\n    Error: kaboom\n        at start (src/index.ts:12:11)\n");
  });

  it("prints nothing for a run whose attempts never threw", () => {
    expect(formatFailedAttempts(run([{ seq: 1, type: "workflow_created", at: 0, payload: {} }]))).toBe("");
  });
});
