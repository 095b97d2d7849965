/**
 * The WorkflowFlowKey actor itself: what only the Durable Object implementation of flow control does
 * (one actor per key, its stored state, its reconcile alarm). The behaviour every backend shares is in
 * test/conformance/flowControlConformance.ts.
 */
import { env, listDurableObjectIds, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSqlEventStore } from "#src/engine/storage/sqlEventStore.ts";
import { cancelRun } from "#src/engine/control/runControl.ts";
import {
  installWorkflowBackend,
  resetWorkflowsForTests,
  workflow,
  type WorkflowRun,
} from "#src/engine/api/workflowApi.ts";
import { durableObjectSql } from "#src/objects/durableObjectSql.ts";
import { actorIdOfRun } from "#src/objects/runIds.ts";
import { readStorageMeter, resetStorageMeter } from "#src/objects/storageMeter.ts";
import { durableObjectWorkflowBackend } from "#src/runtime/workflow/durableObjectBackend.ts";
import type { WorkflowActorEnv } from "#src/runtime/workflow/workflowActorClient.ts";

const actorEnv = env as unknown as WorkflowActorEnv;

const keyActor = (workflowName: string, key: string) =>
  env.WORKFLOW_FLOW_KEYS.get(env.WORKFLOW_FLOW_KEYS.idFromName(JSON.stringify([workflowName, key])));

async function statusOf(run: WorkflowRun): Promise<string | undefined> {
  return (await workflow.get(run.id))?.status;
}

async function until(check: () => Promise<boolean>): Promise<void> {
  for (let tries = 0; tries < 500; tries++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("never happened");
}

describe("WorkflowFlowKey actor", () => {
  beforeEach(() => {
    resetWorkflowsForTests();
    // Each run stays active until it is sent "go".
    workflow(
      "solo",
      {
        start: async () => ({ step: "finish", waitFor: "go" }),
        finish: async (ctx) => ({ done: true, result: ctx.data }),
      },
      { concurrency: { limit: 1, key: (data: { customer: string }) => data.customer } },
    );
    installWorkflowBackend(durableObjectWorkflowBackend(actorEnv));
  });
  afterEach(() => resetWorkflowsForTests());

  it("keeps each key in an actor of its own, with its queue and slots stored", async () => {
    const a1 = await workflow.start("solo", { customer: "a-own" });
    const a2 = await workflow.start("solo", { customer: "a-own" });
    const b1 = await workflow.start("solo", { customer: "b-own" });
    expect([await statusOf(a1), await statusOf(a2), await statusOf(b1)]).toEqual(["running", "queued", "running"]);
    expect(await keyActor("solo", "a-own").state()).toEqual({
      active: [a1.id],
      queue: [a2.id],
      started: [],
      debounce: null,
    });
    expect(await keyActor("solo", "b-own").state()).toEqual({
      active: [b1.id],
      queue: [],
      started: [],
      debounce: null,
    });
    const ids = (await listDurableObjectIds(env.WORKFLOW_FLOW_KEYS)).map((id) => id.toString());
    expect(ids).toEqual(
      expect.arrayContaining([
        env.WORKFLOW_FLOW_KEYS.idFromName(JSON.stringify(["solo", "a-own"])).toString(),
        env.WORKFLOW_FLOW_KEYS.idFromName(JSON.stringify(["solo", "b-own"])).toString(),
      ]),
    );
    for (const run of [a1, a2, b1]) await workflow.send(run.id, "go", null);
    await until(async () => (await statusOf(a2)) === "completed");
    expect(await keyActor("solo", "a-own").state()).toEqual({ active: [], queue: [], started: [], debounce: null });
  });

  it("arms its reconcile alarm once while runs wait, not again for each arrival", async () => {
    const first = await workflow.start("solo", { customer: "alarms" });
    resetStorageMeter();
    const queued: WorkflowRun[] = [];
    for (let i = 0; i < 5; i++) queued.push(await workflow.start("solo", { customer: "alarms" }));
    expect(await Promise.all(queued.map(statusOf))).toEqual(Array(5).fill("queued"));
    // Queued runs' actors set no alarm: these are the key's.
    expect(readStorageMeter().alarmsSet).toBe(1);
    const armed = await runInDurableObject(keyActor("solo", "alarms"), (_instance, state) => state.storage.getAlarm());
    expect(armed).not.toBeNull();
    for (const run of [first, ...queued]) {
      await until(async () => (await statusOf(run)) === "running");
      await workflow.send(run.id, "go", null);
      await until(async () => (await statusOf(run)) === "completed");
    }
    // Nothing waits any more: the alarm is cleared.
    expect(
      await runInDurableObject(keyActor("solo", "alarms"), (_instance, state) => state.storage.getAlarm()),
    ).toBeNull();
  });

  it("a run's end that never reached its key: the key's alarm finds the run ended and starts the next", async () => {
    const first = await workflow.start("solo", { customer: "lost" });
    const second = await workflow.start("solo", { customer: "lost" });
    expect(await statusOf(second)).toBe("queued");
    // End the first run in its actor's log without its actor telling the key (as if that message was lost).
    const runActor = actorEnv.WORKFLOW_RUNS.get(actorIdOfRun(actorEnv.WORKFLOW_RUNS, first.id)!);
    await runInDurableObject(runActor, (_instance, state) =>
      cancelRun(createSqlEventStore(durableObjectSql(state.storage)), {
        runId: first.id,
        reason: "lost message",
        now: Date.now(),
      }),
    );
    expect(await statusOf(first)).toBe("cancelled");
    expect(await statusOf(second)).toBe("queued");
    expect((await workflow.get(second.id))?.queued?.waitsFor).toMatch(/concurrency slot: 1 of 1 runs of key "lost"/);

    expect(await runDurableObjectAlarm(keyActor("solo", "lost"))).toBe(true);
    await until(async () => (await statusOf(second)) === "running");
    await workflow.send(second.id, "go", null);
    await until(async () => (await statusOf(second)) === "completed");
    expect((await workflow.get(second.id))?.events.map((e) => e.type)).toEqual([
      "workflow_created",
      "workflow_dequeued",
      "step_started",
      "step_completed",
      "event_received",
      "step_started",
      "step_completed",
      "workflow_completed",
    ]);
  });
});
