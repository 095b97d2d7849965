/**
 * A flow key's calls to its runs' actors failing: the two bugs the seeded RPC-fault run found
 * (test/objects/actorRpcFaults.long.workerd.test.ts), each as one deterministic case, and the same lost
 * dequeue across a restart of the key's actor.
 */
import { abortAllDurableObjects, env, runDurableObjectAlarm } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { installWorkflowBackend, resetWorkflowsForTests, workflow } from "#src/engine/api/workflowApi.ts";
import { type ActorCall, actorCalls } from "#src/objects/actorClient.ts";
import { durableObjectWorkflowBackend } from "#src/runtime/workflow/durableObjectBackend.ts";
import type { WorkflowActorEnv } from "#src/runtime/workflow/workflowActorClient.ts";
import { failNthCall } from "#test/support/workflow/actorRpcFaults.ts";

const actorEnv = env as unknown as WorkflowActorEnv;
const passThrough = (_call: ActorCall, invoke: () => Promise<unknown>) => invoke();

const keyActor = (key: string) =>
  env.WORKFLOW_FLOW_KEYS.get(env.WORKFLOW_FLOW_KEYS.idFromName(JSON.stringify(["gated", key])));

async function until(check: () => Promise<boolean>): Promise<void> {
  for (let tries = 0; tries < 300; tries++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("never happened");
}

const statusOf = async (runId: string) => (await workflow.get(runId))?.status;

describe("a flow key whose calls to run actors fail", () => {
  beforeEach(() => {
    resetWorkflowsForTests();
    // Each run holds the key's one slot until it is sent "go".
    workflow(
      "gated",
      {
        start: async () => ({ step: "finish", waitFor: "go" }),
        finish: async () => ({ done: true, result: "done" }),
      },
      { concurrency: { limit: 1, key: (data: { key: string }) => data.key } },
    );
    installWorkflowBackend(durableObjectWorkflowBackend(actorEnv));
  });
  afterEach(() => {
    actorCalls.around = passThrough;
    resetWorkflowsForTests();
  });

  it("keeps in its queue a run whose start its actor took but whose answer was lost, and starts it when the slot frees", async () => {
    const first = await workflow.start("gated", { key: "lost-answer" });
    // Call 1 is the runtime's to the key, call 2 the key's to the run's actor: the run is created, queued.
    actorCalls.around = failNthCall("start", 2, "after");
    const refused = await workflow.start("gated", { key: "lost-answer" }, { id: "lost-answer-2" }).catch((e) => e);
    actorCalls.around = passThrough;
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(/RPC start failed after the callee acted \(injected\)/);
    const second = (await workflow.start("gated", { key: "lost-answer" }, { id: "lost-answer-2" })).id;
    expect(await statusOf(second)).toBe("queued");
    expect((await keyActor("lost-answer").state())?.queue).toEqual([second]);

    await workflow.send(first.id, "go", null);
    await until(async () => (await statusOf(second)) === "running");
    await workflow.send(second, "go", null);
    await until(async () => (await statusOf(second)) === "completed");
  });

  it("arms its reconcile alarm when a dequeue fails with nothing else waiting, and the alarm starts the run", async () => {
    const first = await workflow.start("gated", { key: "lost-dequeue" });
    const second = await workflow.start("gated", { key: "lost-dequeue" });
    expect(await statusOf(second.id)).toBe("queued");
    actorCalls.around = failNthCall("dequeue", 1, "before");
    await workflow.send(first.id, "go", null);
    await until(async () => (await statusOf(first.id)) === "completed");
    // The slot is the second run's now, but its actor never heard: the queue is empty, the run still queued.
    await until(async () => (await keyActor("lost-dequeue").state())?.active.includes(second.id) === true);
    actorCalls.around = passThrough;
    expect(await statusOf(second.id)).toBe("queued");

    // The reconcile alarm, due FLOW_RECONCILE_MS later, fires now.
    expect(await runDurableObjectAlarm(keyActor("lost-dequeue"))).toBe(true);
    await until(async () => (await statusOf(second.id)) === "running");
    await workflow.send(second.id, "go", null);
    await until(async () => (await statusOf(second.id)) === "completed");
  });

  it("remembers a run whose dequeue failed across a restart of the key's actor, and its alarm still starts the run", async () => {
    const first = await workflow.start("gated", { key: "restarted" });
    const second = await workflow.start("gated", { key: "restarted" });
    actorCalls.around = failNthCall("dequeue", 1, "before");
    await workflow.send(first.id, "go", null);
    await until(async () => (await statusOf(first.id)) === "completed");
    await until(async () => (await keyActor("restarted").state())?.active.includes(second.id) === true);
    actorCalls.around = passThrough;

    // The actors restart (a crash, a deploy) before the key's reconcile alarm: its memory is gone.
    await abortAllDurableObjects();
    expect(await runDurableObjectAlarm(keyActor("restarted"))).toBe(true);
    await until(async () => (await statusOf(second.id)) === "running");
    await workflow.send(second.id, "go", null);
    await until(async () => (await statusOf(second.id)) === "completed");
  });
});
