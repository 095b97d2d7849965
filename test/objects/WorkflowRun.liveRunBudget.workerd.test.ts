/**
 * The account's live-run budget as runs meet it: run actors and `workflow.start` hold their
 * slots through the real API worker (a cap of 5, `MAX_LIVE_RUNS_PER_ACCOUNT`), and the run index
 * gives them back as runs end. A fan-out is held whole or refused whole.
 */
import { env } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { workflow } from "#src/engine/api/workflowApi.ts";
import { accountLiveRunBudget } from "#src/objects/LiveRunBudget.ts";
import { platformLiveRunSlots } from "#src/objects/liveRunSlots.ts";
import { runIndexOf } from "#src/objects/runIndexClient.ts";
import { workflowRunHost } from "#src/objects/workflowRunHost.ts";
import type { ProjectRow } from "#src/workers/db/projectsTable.ts";
import { apiHarness, userWithProject } from "#test/support/workerd/index.ts";
import { liveRunPlatform } from "#test/support/workerd/liveRunPlatform.ts";
import { actorEnv } from "#test/support/workerd/workflowActors.ts";
import { platformRejection } from "#test/support/workerd/plugins.ts";
import { PROGRESS } from "#test/support/workflow/progress.ts";
import { useActorTestHost } from "./WorkflowRun.fixture.ts";

const CAP = "5";
const BUDGET_MESSAGE =
  /^Account live-run budget of 5 runs reached: the account that owns this project has \d+ runs live/;

describe("the live-run budget, as runs start, fan out and end", () => {
  useActorTestHost();
  let row: ProjectRow;
  let platform: ReturnType<typeof liveRunPlatform>;
  const live = () => accountLiveRunBudget(env.LIVE_RUN_BUDGET, row.owner_id).live();
  const settlesAt = (n: number) => vi.waitFor(async () => expect(await live()).toBe(n), PROGRESS);

  beforeEach(async () => {
    row = (await userWithProject("ada@example.com", "ada-budget")).row;
    platform = liveRunPlatform(row, apiHarness({ env: { MAX_LIVE_RUNS_PER_ACCOUNT: CAP } }).env);
    workflowRunHost.liveRuns = () => platformLiveRunSlots(platform);
    workflow("budget.kid", { start: async () => ({ done: true, result: "kid" }) });
    workflow("budget.waiter", {
      start: async () => ({ step: "finish", waitFor: "go" }),
      finish: async () => ({ done: true, result: "went" }),
    });
    workflow(
      "budget.parent",
      {
        start: async (ctx) => ({
          step: "collect",
          children: Array.from({ length: (ctx.data as { n: number }).n }, () => ({
            workflow: "budget.kid",
            data: null,
          })),
        }),
        collect: async (ctx) => ({ done: true, result: (ctx.children ?? []).map((child) => child.status) }),
      },
      { maxAttempts: 2, backoff: { initialMS: 5, maxMS: 5, jitter: 0 } },
    );
  });
  afterEach(() => {
    workflowRunHost.liveRuns = platformLiveRunSlots;
  });

  it("a fan-out within the budget runs, and every run's slot comes back when it ends", async () => {
    const parent = await workflow.start("budget.parent", { n: 4 });
    expect(await parent.result()).toEqual(["completed", "completed", "completed", "completed"]);
    await settlesAt(0);
    // The parent's slot, then the four children's in one call.
    expect(platform.calls.filter((path) => path.endsWith("/hold"))).toHaveLength(2);
  });

  it("a fan-out that would pass the budget fails its attempts with rate_limited naming the cap, and starts no child", async () => {
    const parent = await workflow.start("budget.parent", { n: 5 });
    const failure = await platformRejection(parent.result());
    expect(failure.message).toMatch(BUDGET_MESSAGE);
    const view = (await workflow.get(parent.id))!;
    expect(view.status).toBe("failed");
    // The refusal is a retryable step failure: the step is tried again (its slots may have come back by then).
    expect(view.events.map((event) => event.type)).toEqual([
      "workflow_created",
      "step_started",
      "step_failed",
      "step_started",
      "step_failed",
      "workflow_failed",
    ]);
    expect(view.events[2]!.payload).toMatchObject({ retryable: true });
    for (const failed of [view.events[2]!, view.events[4]!])
      expect((failed.payload as { reason: string }).reason).toMatch(BUDGET_MESSAGE);
    // No child run exists: the index lists the parent alone, and nothing stays held.
    expect((await runIndexOf(actorEnv).list({ name: "budget.kid", limit: 50 })).runs).toEqual([]);
    await settlesAt(0);
  });

  it("past the budget workflow.start is refused with rate_limited and makes no run; a run's end frees its slot", async () => {
    const waiting = [];
    for (let i = 0; i < 5; i++) waiting.push(await workflow.start("budget.waiter", null));
    expect(await live()).toBe(5);
    const refused = await platformRejection(workflow.start("budget.waiter", null));
    expect(refused.code).toBe("rate_limited");
    expect(refused.message).toMatch(BUDGET_MESSAGE);
    expect((await runIndexOf(actorEnv).list({ name: "budget.waiter", limit: 50 })).runs).toHaveLength(5);

    await workflow.send(waiting[0]!.id, "go", null);
    expect(await waiting[0]!.result()).toBe("went");
    await settlesAt(4);
    const next = await workflow.start("budget.waiter", null);
    expect(next.created).toBe(true);
    expect(await live()).toBe(5);
  });

  it("a start that finds its id's run active holds no second slot; a cancelled run gives its slot back", async () => {
    const first = await workflow.start("budget.waiter", null, { id: "order-1" });
    const again = await workflow.start("budget.waiter", null, { id: "order-1" });
    expect(again).toMatchObject({ id: first.id, created: false });
    expect(await live()).toBe(1);
    await workflow.cancel(first.id, "not needed");
    await settlesAt(0);
  });
});
