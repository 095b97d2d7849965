/**
 * Priority and fair queues (beyond the spec), every backend: among a flow key's queued runs a
 * higher `priority` starts first, and `concurrency.fairness` takes turns across its values. The
 * order is read from the runs' own start times; each step lasts a few ms so no two starts share one.
 */
import { describe, expect, it } from "vitest";
import { workflow, type WorkflowRun } from "#src/engine/api/workflowApi.ts";
import { startedAt } from "#test/support/workflow/activeRuns.ts";
import { type MakeWorkflowBackend, pollingGates, useBackendUnderTest } from "./workflowConformance.fixture.ts";

const TENANT_A_RUNS = 30;

export function describePriorityFairnessConformance(name: string, makeBackend: MakeWorkflowBackend): void {
  describe(`flow control, priority and fairness: ${name}`, () => {
    const gates = pollingGates();
    useBackendUnderTest(makeBackend, gates, () => {
      const step = async (ctx: { data: { gate?: string } }) => {
        if (ctx.data.gate) await gates.wait(ctx.data.gate);
        await new Promise((resolve) => setTimeout(resolve, 4));
        return { done: true as const, result: ctx.data };
      };
      workflow("fair", { start: step }, { concurrency: { limit: 1, fairness: (data) => data.tenant } });
      workflow("ranked", { start: step }, { concurrency: { limit: 1 } });
    });

    /** The runs in the order they started (their queue let them), the blocker first. */
    async function startOrder(runs: readonly WorkflowRun[]): Promise<string[]> {
      await Promise.all(runs.map((run) => run.result()));
      const views = await Promise.all(runs.map(async (run) => (await workflow.get(run.id))!));
      return views.sort((a, b) => startedAt(a) - startedAt(b)).map((view) => view.id);
    }

    it(`${TENANT_A_RUNS} queued runs of tenant A, then 1 of tenant B: B's starts no later than second`, async () => {
      const blocker = await workflow.start("fair", { tenant: "A", gate: "fair-blocker" });
      const tenantA: WorkflowRun[] = [];
      for (let n = 0; n < TENANT_A_RUNS; n++) tenantA.push(await workflow.start("fair", { tenant: "A", n }));
      const tenantB = await workflow.start("fair", { tenant: "B" });
      const queued = await workflow.get(tenantB.id);
      expect(queued?.queued).toMatchObject({ fairness: "B", priority: 5, ahead: 0 });
      gates.open("fair-blocker");
      const order = await startOrder([blocker, ...tenantA, tenantB]);
      expect(order.indexOf(tenantB.id)).toBeLessThanOrEqual(2);
      expect(order.filter((id) => id !== tenantB.id)).toEqual([blocker.id, ...tenantA.map((run) => run.id)]);
    }, 30_000);

    it("a priority-9 run queued last starts before the priority-5 runs queued before it", async () => {
      const blocker = await workflow.start("ranked", { gate: "ranked-blocker" });
      const normal: WorkflowRun[] = [];
      for (let n = 0; n < 5; n++) normal.push(await workflow.start("ranked", { n }));
      const urgent = await workflow.start("ranked", { urgent: true }, { priority: 9 });
      expect((await workflow.get(urgent.id))?.queued).toMatchObject({ priority: 9, ahead: 0 });
      expect((await workflow.get(normal[0]!.id))?.queued).toMatchObject({ priority: 5, ahead: 1 });
      gates.open("ranked-blocker");
      const order = await startOrder([blocker, ...normal, urgent]);
      expect(order).toEqual([blocker.id, urgent.id, ...normal.map((run) => run.id)]);
    }, 30_000);

    it.each([0, 11, 2.5, "9"])("refuses priority %j with invalid_input, starting nothing", async (priority) => {
      await expect(workflow.start("ranked", {}, { priority: priority as number })).rejects.toMatchObject({
        code: "invalid_input",
        message: expect.stringMatching(/priority must be an integer from 1 to 10/),
      });
      expect((await workflow.list({})).runs).toEqual([]);
    });
  });
}
