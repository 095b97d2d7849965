/**
 * Rollbacks, every backend: when a run fails for good, the rollback handlers of its completed steps
 * run latest completion first, each a durable step with its own attempts; a rollback that keeps
 * failing is recorded and the next still runs; the run then ends failed with the failing step's reason.
 */
import { describe, expect, it } from "vitest";
import type { WorkflowSteps } from "#src/engine/api/definition.ts";
import { workflow } from "#src/engine/api/workflowApi.ts";
import { rejection, shape } from "#test/support/workflow/index.ts";
import { type MakeWorkflowBackend, pollingGates, useBackendUnderTest, viewOf } from "./workflowConformance.fixture.ts";

const QUICK_RETRY = { initialMS: 1, maxMS: 1, jitter: 0 };

/** What the handlers saw, per run: pushed by the handlers, read by the cases. */
const seen = new Map<string, { step: string; output: unknown; failure: unknown; attempt: number }[]>();

function record(ctx: { runId: string; step: string; output: unknown; failure: unknown; attempt: number }): void {
  const list = seen.get(ctx.runId) ?? [];
  list.push({ step: ctx.step, output: ctx.output, failure: ctx.failure, attempt: ctx.attempt });
  seen.set(ctx.runId, list);
}

class OutOfStockError extends Error {
  override name = "OutOfStockError";
}

export function describeRollbackConformance(name: string, makeBackend: MakeWorkflowBackend): void {
  describe(`workflow conformance, rollbacks: ${name}`, () => {
    useBackendUnderTest(makeBackend, pollingGates(), () => {
      workflow(
        "order",
        {
          start: async () => ({ step: "reserve" }),
          reserve: async (ctx) => {
            ctx.write("reservation", "R-1");
            return { step: "charge" };
          },
          charge: async (ctx) => {
            ctx.write("charge", { id: "ch_1", amount: ctx.data.amount });
            return { step: "ship" };
          },
          ship: async (ctx) => {
            if (ctx.data.ship === "ok") return { done: true, result: "shipped" };
            throw new OutOfStockError("out of stock");
          },
        },
        {
          maxAttempts: 2,
          backoff: QUICK_RETRY,
          nonRetryableErrors: ["OutOfStockError"],
          rollbackOptions: { maxAttempts: 3, backoff: QUICK_RETRY },
          rollback: {
            reserve: async (ctx) => record(ctx),
            charge: async (ctx) => {
              record(ctx);
              if (ctx.data.refund === "always-fails") throw new Error("refund service down");
              if (ctx.data.refund === "flaky" && ctx.attempt === 1) throw new Error("refund timeout");
            },
          },
        },
      );
      const booking: WorkflowSteps = {
        start: async () => ({ step: "hold" }),
        hold: async (ctx) => {
          ctx.write("hold", "H-1");
          return { step: "confirmed", waitFor: "confirm" };
        },
        confirmed: async () => ({ done: true }),
      };
      workflow("booking", booking, { rollbackOnCancel: true, rollback: { hold: async (ctx) => record(ctx) } });
      workflow("booking-plain", booking, { rollback: { hold: async (ctx) => record(ctx) } });
    });

    it("a terminal failure runs charge's then reserve's rollback and ends failed with the step's reason", async () => {
      const run = await workflow.start("order", { amount: 42 });
      const error = await rejection(run.result());
      expect(error.message).toBe("out of stock");
      const view = await viewOf(run.id);
      expect(shape(view.events)).toEqual([
        "workflow_created",
        "step_started(start,1)",
        "step_completed(start->reserve)",
        "step_started(reserve,1)",
        "step_completed(reserve->charge)",
        "step_started(charge,1)",
        "step_completed(charge->ship)",
        "step_started(ship,1)",
        "step_failed(ship,1,final)",
        "rollback_started(charge,1)",
        "rollback_completed(charge)",
        "rollback_started(reserve,1)",
        "rollback_completed(reserve)",
        "workflow_failed",
      ]);
      expect(view.events.at(-1)?.payload).toEqual({ reason: "out of stock", cause: "non_retryable" });
      expect(view.status).toBe("failed");
      expect(view.rolledBack).toEqual(["charge", "reserve"]);
      expect(view.rollbackFailed).toBeUndefined();
      const handlers = seen.get(run.id) ?? [];
      expect(handlers.map((h) => h.step)).toEqual(["charge", "reserve"]);
      expect(handlers[0]?.output).toEqual({ charge: { id: "ch_1", amount: 42 } });
      expect(handlers[1]?.output).toEqual({ reservation: "R-1" });
      expect(handlers[0]?.failure).toMatchObject({ step: "ship", reason: "out of stock", cause: "non_retryable" });
      expect(handlers[0]?.failure).toMatchObject({ error: { name: "OutOfStockError", message: "out of stock" } });
    });

    it("a rollback that always throws is listed in rollbackFailed after its attempts, and the next one still runs", async () => {
      const run = await workflow.start("order", { amount: 1, refund: "always-fails" });
      expect((await rejection(run.result())).message).toBe("out of stock");
      const view = await viewOf(run.id);
      expect(shape(view.events, { reasons: true }).slice(8)).toEqual([
        "step_failed(ship,1,out of stock,final)",
        "rollback_started(charge,1)",
        "rollback_failed(charge,1,refund service down,retryable)",
        "rollback_started(charge,2)",
        "rollback_failed(charge,2,refund service down,retryable)",
        "rollback_started(charge,3)",
        "rollback_failed(charge,3,refund service down,final)",
        "rollback_started(reserve,1)",
        "rollback_completed(reserve)",
        "workflow_failed",
      ]);
      expect(view.rolledBack).toEqual(["reserve"]);
      expect(view.rollbackFailed).toEqual(["charge"]);
    });

    it("a rollback is retried after a failed attempt and completes", async () => {
      const run = await workflow.start("order", { amount: 1, refund: "flaky" });
      await rejection(run.result());
      const view = await viewOf(run.id);
      expect(view.rolledBack).toEqual(["charge", "reserve"]);
      expect((seen.get(run.id) ?? []).map((h) => `${h.step}#${h.attempt}`)).toEqual([
        "charge#1",
        "charge#2",
        "reserve#1",
      ]);
    });

    it("a run that completes runs no rollback", async () => {
      const run = await workflow.start("order", { amount: 1, ship: "ok" });
      await expect(run.result()).resolves.toBe("shipped");
      const view = await viewOf(run.id);
      expect(shape(view.events).some((type) => type.startsWith("rollback"))).toBe(false);
      expect(view.rolledBack).toBeUndefined();
      expect(seen.has(run.id)).toBe(false);
    });

    it("with rollbackOnCancel, a cancel rolls back the completed steps, then ends the run cancelled", async () => {
      const run = await workflow.start("booking", { onCancel: true });
      await waitForStatus(run.id, (view) => view.waitingFor !== undefined);
      await workflow.cancel(run.id, "customer changed their mind");
      const error = await rejection(run.result());
      expect(error).toMatchObject({ code: "cancelled" });
      const view = await viewOf(run.id);
      expect(shape(view.events).slice(3)).toEqual([
        "step_started(hold,1)",
        "step_completed(hold->confirmed)",
        "cancel_requested",
        "rollback_started(hold,1)",
        "rollback_completed(hold)",
        "workflow_cancelled",
      ]);
      expect(view.status).toBe("cancelled");
      expect(view.cancelReason).toBe("customer changed their mind");
      expect(view.rolledBack).toEqual(["hold"]);
      expect(seen.get(run.id)?.[0]?.failure).toEqual({ reason: "customer changed their mind", cause: "cancelled" });
    });

    it("without rollbackOnCancel, a cancel ends the run at once and rolls nothing back", async () => {
      const run = await workflow.start("booking-plain", {});
      await waitForStatus(run.id, (view) => view.waitingFor !== undefined);
      await workflow.cancel(run.id, "no");
      expect(await rejection(run.result())).toMatchObject({ code: "cancelled" });
      const view = await viewOf(run.id);
      expect(shape(view.events).slice(-2)).toEqual(["step_completed(hold->confirmed)", "workflow_cancelled"]);
      expect(view.rolledBack).toBeUndefined();
      expect(seen.has(run.id)).toBe(false);
    });
  });
}

/** Polls the run's view until `ready` holds (the backends drive runs on their own). */
async function waitForStatus(runId: string, ready: (view: Awaited<ReturnType<typeof viewOf>>) => boolean) {
  for (let i = 0; i < 500; i++) {
    if (ready(await viewOf(runId))) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`Run ${runId} never got there`);
}
