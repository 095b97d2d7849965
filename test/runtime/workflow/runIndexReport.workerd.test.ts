/**
 * A start's report to the run index belongs to the request that made it. Workerd cancels a request's
 * I/O when the request ends or is cancelled (a client gone, a push swapping the project), so a report
 * that waited on a call made by another request could wait forever: with one batch shared by every
 * request, a single cancelled call left every later `workflow.start` of the isolate hanging (the chaos
 * suite under `platform up` with pushes: 500 "code had hung" for minutes). The stuck call is replayed
 * here as an index call that never settles.
 */
import { env } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { installWorkflowBackend, resetWorkflowsForTests, workflow } from "#src/engine/api/workflowApi.ts";
import { type ActorCall, actorCalls } from "#src/objects/actorClient.ts";
import { durableObjectWorkflowBackend } from "#src/runtime/workflow/durableObjectBackend.ts";
import type { WorkflowActorEnv } from "#src/runtime/workflow/workflowActorClient.ts";

const passThrough = (_call: ActorCall, invoke: () => Promise<unknown>) => invoke();

describe("a run index report whose call never settles", () => {
  beforeEach(() => {
    resetWorkflowsForTests();
    workflow("quick", { start: async () => ({ done: true, result: "ok" }) });
    installWorkflowBackend(durableObjectWorkflowBackend(env as unknown as WorkflowActorEnv));
  });
  afterEach(() => {
    actorCalls.around = passThrough;
    resetWorkflowsForTests();
  });

  it("holds only its own start: a later start is indexed and answered", async () => {
    let stuck = 0;
    actorCalls.around = (call, invoke) => {
      if (call.method !== "record" || stuck > 0) return invoke();
      stuck++;
      return new Promise<never>(() => {});
    };
    let firstAnswered = false;
    void workflow.start("quick", {}, { id: "cancelled-request" }).then(() => {
      firstAnswered = true;
    });
    for (let tries = 0; stuck === 0 && tries < 500; tries++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(stuck).toBe(1);
    actorCalls.around = passThrough;

    const second = await workflow.start("quick", {}, { id: "next-request" });
    expect(firstAnswered).toBe(false);
    const listed = await workflow.list({});
    expect(listed.runs.map((run) => run.id)).toContain(second.id);
  });
});
