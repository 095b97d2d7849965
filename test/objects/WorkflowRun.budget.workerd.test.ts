/**
 * The WorkflowRunActor's 50-second step-loop budget, on a clock the test moves: one invocation
 * stops claiming steps once it is spent, and the next (the queue's execute, or the actor's alarm
 * in a fresh instance) goes on from the log.
 */
import { env, evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { systemClock } from "#src/engine/api/clock.ts";
import { createRun } from "#src/engine/execution/createRun.ts";
import { executeRun } from "#src/engine/execution/executeRun.ts";
import { createSqlEventStore } from "#src/engine/storage/sqlEventStore.ts";
import { workflow } from "#src/engine/api/workflowApi.ts";
import { durableObjectSql } from "#src/objects/durableObjectSql.ts";
import { workflowRunActor } from "#src/runtime/workflow/workflowActorClient.ts";
import { actorAlarm, actorEnv, actorLog, actorNamed, actorOfRun, waitForLog } from "#test/support/workerd/index.ts";
import { definitionOf, expectWellFormed, PROGRESS } from "#test/support/workflow/index.ts";
import { advanceClock, chainOf, invocations, shape, testClock, useActorTestHost } from "./WorkflowRun.fixture.ts";

useActorTestHost();

describe("WorkflowRunActor: the 50-second step-loop budget", () => {
  // Each step "works" 20 seconds on the test clock: a 50 s budget fits three claims.
  /** Claims at 0 s, 20 s and 40 s on the test clock; at 60 s the budget is spent. */
  const firstInvocationLog = [
    "workflow_created",
    "step_started(start,1)",
    "step_completed(start->s2)",
    "step_started(s2,1)",
    "step_completed(s2->s3)",
    "step_started(s3,1)",
    "step_completed(s3->s4)",
  ];
  const marathonLog = [
    ...firstInvocationLog,
    "step_started(s4,1)",
    "step_completed(s4->s5)",
    "step_started(s5,1)",
    "step_completed(s5)",
    "workflow_completed",
  ];
  const marathonInvocations = (workflowId: string) =>
    ["start", "s2", "s3", "s4", "s5"].map((step) => `${workflowId}:${step}#1`);
  beforeEach(() => {
    workflow(
      "budget.marathon",
      chainOf(["start", "s2", "s3", "s4", "s5"], () => advanceClock(20_000), "marathon done"),
    );
  });

  it("executeRun on the actor's store stops claiming at budgetMS; a fresh execution finishes with every step completed once", async () => {
    const actor = actorNamed("budget-1");
    const runId = `${env.WORKFLOW_RUNS.idFromName("budget-1")}.budget000001`;
    const first = await runInDurableObject(actor, async (_instance, state) => {
      const store = createSqlEventStore(durableObjectSql(state.storage));
      createRun(store, definitionOf("budget.marathon"), null, { runId, workflowId: "budget-1", now: testClock() });
      const result = await executeRun(store, definitionOf("budget.marathon"), runId, {
        now: testClock,
        budgetMS: 50_000,
      });
      return { result, events: store.events(runId) };
    });
    expect(first.result).toEqual({ status: "budget_exhausted" });
    // It stopped between steps: the last step it claimed is committed, the next one unclaimed.
    expect(shape(first.events)).toEqual(firstInvocationLog);

    // The queue's next execute lands in a fresh invocation and continues from the log.
    expect(await workflowRunActor(actorEnv, actor.id).execute(runId)).toEqual({ done: true });
    const events = await actorLog(runId);
    expect(shape(events)).toEqual(marathonLog);
    expectWellFormed(events);
    expect(invocations).toEqual(marathonInvocations("budget-1"));
  });

  it("inside the actor: the budget ends one invocation, the alarm continues in a fresh instance, every step completes once", async () => {
    // Each step of "budget.marathon" advances the test clock, which the actor reads, by 20 s.
    const run = await workflow.start("budget.marathon", null, { id: "budget-2" });
    const stub = actorOfRun(run.id);
    // First invocation (the start alarm): claims at 0 s, 20 s, 40 s; at 60 s the budget is spent.
    const cut = await waitForLog(run.id, (events) => shape(events).includes("step_completed(s3->s4)"));
    // Armed for "now" on the actor's clock (60 simulated seconds ahead), to continue in a fresh invocation.
    await vi.waitFor(
      async () => expect((await actorAlarm(run.id)) ?? 0).toBeGreaterThanOrEqual(cut.at(-1)!.at),
      PROGRESS,
    );
    expect(shape(await actorLog(run.id))).toEqual(firstInvocationLog);
    expect(cut.at(-1)!.at - cut[1]!.at).toBeGreaterThanOrEqual(60_000);
    expect((await actorAlarm(run.id))! - systemClock()).toBeGreaterThan(50_000);

    const before = await runInDurableObject(stub, (instance) => instance);
    await evictDurableObject(stub);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await runInDurableObject(stub, (instance) => instance)).not.toBe(before);

    const events = await actorLog(run.id);
    expect(shape(events)).toEqual(marathonLog);
    expectWellFormed(events);
    expect(invocations).toEqual(marathonInvocations("budget-2"));
    expect(await workflow.get(run.id)).toMatchObject({ status: "completed", result: "marathon done" });
  });
});
