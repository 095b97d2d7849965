/**
 * Waiting on another run (beyond the spec), every backend: a step returns `{ step, waitForRun, timeoutMS? }`
 * and the next step runs with `ctx.awaited` once that run ends (at once if it has; null after the
 * timeout), told by the awaited run itself, however many runs wait on it.
 */
import { describe, expect, it } from "vitest";
import { NonRetryableError } from "#src/engine/execution/nonRetryableError.ts";
import { workflow } from "#src/engine/api/workflowApi.ts";
import { FAILED_AT_ONCE_LOG, rejection, shape } from "#test/support/workflow/index.ts";
import {
  type MakeWorkflowBackend,
  pollingGates,
  useBackendUnderTest,
  viewOf,
  viewWhen,
} from "./workflowConformance.fixture.ts";

const WAITERS = 50;

export function describeWaitForRunConformance(name: string, makeBackend: MakeWorkflowBackend): void {
  describe(`workflow conformance, waiting on another run: ${name}`, () => {
    useBackendUnderTest(makeBackend, pollingGates(), () => {
      workflow("job", {
        start: async () => ({ step: "finish", waitFor: "go" }),
        finish: async (ctx) => {
          if (ctx.event?.payload === "fail") throw new NonRetryableError("the job broke");
          return { done: true, result: { job: ctx.data.n } };
        },
      });
      workflow("report", {
        start: async (ctx) => ({
          step: "summarise",
          waitForRun: ctx.data.other === "self" ? ctx.runId : ctx.data.other,
          ...(ctx.data.timeoutMS === undefined ? {} : { timeoutMS: ctx.data.timeoutMS }),
        }),
        summarise: async (ctx) => ({ done: true, result: { awaited: ctx.awaited, event: ctx.event } }),
      });
    });

    it("the next step runs with ctx.awaited once the other run ends; meanwhile the waiter is running, waitingForRun", async () => {
      const job = await workflow.start("job", { n: 7 });
      const report = await workflow.start("report", { other: job.id });
      const waiting = await viewWhen(report.id, (view) => view.waitingForRun !== undefined);
      expect(waiting).toMatchObject({ status: "running", waitingForRun: { runId: job.id } });
      await workflow.send(job.id, "go");
      await expect(report.result()).resolves.toEqual({
        awaited: { runId: job.id, status: "completed", result: { job: 7 } },
        event: null,
      });
    });

    it(`${WAITERS} runs waiting on one run all go on when it ends`, async () => {
      const job = await workflow.start("job", { n: 1 });
      const reports = await Promise.all(
        Array.from({ length: WAITERS }, () => workflow.start("report", { other: job.id })),
      );
      await Promise.all(reports.map((report) => viewWhen(report.id, (view) => view.waitingForRun !== undefined)));
      await workflow.send(job.id, "go");
      const results = await Promise.all(reports.map((report) => report.result()));
      expect(results.every((result) => result.awaited?.result?.job === 1)).toBe(true);
    }, 30_000);

    it("an ended run is awaited at once, and how it failed is passed on", async () => {
      const job = await workflow.start("job", { n: 2 });
      await workflow.send(job.id, "go", "fail");
      await rejection(job.result());
      const report = await workflow.start("report", { other: job.id });
      await expect(report.result()).resolves.toEqual({
        awaited: { runId: job.id, status: "failed", error: "the job broke" },
        event: null,
      });
    });

    it("timeoutMS: the next step runs with ctx.awaited = null; a later end is not delivered to it", async () => {
      const job = await workflow.start("job", { n: 3 });
      const report = await workflow.start("report", { other: job.id, timeoutMS: 30 });
      await expect(report.result()).resolves.toEqual({ awaited: null, event: null });
      await workflow.send(job.id, "go");
      await job.result();
      expect((await viewOf(report.id)).status).toBe("completed");
    });

    it.each([
      ["a run that does not exist", () => `${"0".repeat(64)}.aaaaaaaaaaaa`, /does not exist/],
      ["a run id that is not one", () => "nope", /does not exist/],
    ])("waiting on %s fails the run at once", async (_, other, message) => {
      const report = await workflow.start("report", { other: other() });
      expect((await rejection(report.result())).message).toMatch(message);
      expect(shape((await viewOf(report.id)).events)).toEqual(FAILED_AT_ONCE_LOG);
    });

    it("a run cannot wait on itself, and nobody may send the event that tells a run's end", async () => {
      const selfish = await workflow.start("report", { other: "self" });
      expect((await rejection(selfish.result())).message).toMatch(/a run cannot wait for itself/);
      const job = await workflow.start("job", { n: 4 });
      const forged = await rejection(workflow.send(job.id, `__run_ended/${job.id}`, { status: "completed" }));
      expect(forged).toMatchObject({ code: "invalid_input" });
      expect(forged.message).toMatch(/reserved for the end of a run/);
    });
  });
}
