/**
 * `workflow.result(runId, { timeoutMS })`, every backend: waits for a run of the project to end and
 * answers how it ended, or null when the timeout passes first.
 */
import { describe, expect, it } from "vitest";
import { NonRetryableError } from "#src/engine/execution/nonRetryableError.ts";
import { workflow } from "#src/engine/api/workflowApi.ts";
import { rejection } from "#test/support/workflow/index.ts";
import { type MakeWorkflowBackend, pollingGates, useBackendUnderTest } from "./workflowConformance.fixture.ts";

export function describeRunResultConformance(name: string, makeBackend: MakeWorkflowBackend): void {
  describe(`workflow.result: ${name}`, () => {
    useBackendUnderTest(makeBackend, pollingGates(), () => {
      workflow("approval", {
        start: async () => ({ step: "decide", waitFor: "decision" }),
        decide: async (ctx) => {
          if (ctx.event?.payload === "no") throw new NonRetryableError("rejected");
          return { done: true, result: { approved: ctx.event?.payload } };
        },
      });
    });

    it("answers a completed run's result once it ends, and null while the timeout passes first", async () => {
      const run = await workflow.start("approval");
      expect(await workflow.result(run.id, { timeoutMS: 30 })).toBeNull();
      const waiting = workflow.result(run.id);
      await workflow.send(run.id, "decision", "yes");
      expect(await waiting).toEqual({ runId: run.id, status: "completed", result: { approved: "yes" } });
    });

    it("answers a failed run's error and a cancelled run's reason; an ended run at once", async () => {
      const failed = await workflow.start("approval");
      await workflow.send(failed.id, "decision", "no");
      expect(await workflow.result(failed.id)).toEqual({ runId: failed.id, status: "failed", error: "rejected" });
      const cancelled = await workflow.start("approval");
      await workflow.cancel(cancelled.id, "not needed");
      expect(await workflow.result(cancelled.id, { timeoutMS: 0 })).toEqual({
        runId: cancelled.id,
        status: "cancelled",
        error: "not needed",
      });
    });

    it.each([
      ["an unknown run", "0".repeat(64), {}, "not_found"],
      ["a negative timeout", null, { timeoutMS: -1 }, "invalid_input"],
      ["a misspelt option", null, { timeoutMs: 5 }, "invalid_input"],
    ])("refuses %s", async (_, runId, options, code) => {
      const id = runId ?? (await workflow.start("approval")).id;
      expect((await rejection(workflow.result(id, options as { timeoutMS?: number }))).code).toBe(code);
    });
  });
}
