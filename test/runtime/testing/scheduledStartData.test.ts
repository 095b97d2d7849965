import { afterEach, expect, expectTypeOf, it } from "vitest";
import { getWorkflowDefinition, resetWorkflowsForTests } from "#src/engine/api/workflowApi.ts";
import { type ScheduledStartData, workflow } from "platform";
import { testWorkflow } from "platform/testing";

afterEach(() => resetWorkflowsForTests());

// The example of docs/workflows.md ("Schedules") and the package README, as a user writes it.
it("a scheduled workflow typed with ScheduledStartData reads ctx.data.scheduledAt", async () => {
  const nightly = workflow<ScheduledStartData>(
    "nightly-report",
    { start: async (ctx) => ({ done: true, result: `report for ${ctx.data.scheduledAt}` }) },
    { schedule: { cron: "0 2 * * *", timezone: "Europe/Berlin" } },
  );
  expectTypeOf<ScheduledStartData>().toEqualTypeOf<{ scheduledAt: string }>();
  expect(getWorkflowDefinition("nightly-report")?.schedule).toEqual({ cron: "0 2 * * *", timezone: "Europe/Berlin" });
  const run = await testWorkflow(nightly, { scheduledAt: "2026-01-01T01:00:00.000Z" });
  await expect(run.result()).resolves.toBe("report for 2026-01-01T01:00:00.000Z");
});
