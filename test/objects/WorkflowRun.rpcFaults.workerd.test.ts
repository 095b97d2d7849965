/**
 * A run actor's call to start a child failing after the child's actor acted: the bug the seeded
 * RPC-fault run found (test/objects/actorRpcFaults.long.workerd.test.ts), as one deterministic case.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { workflow } from "#src/engine/api/workflowApi.ts";
import { type ActorCall, actorCalls } from "#src/objects/actorClient.ts";
import { runIndexOf } from "#src/objects/runIndexClient.ts";
import { actorEnv } from "#test/support/workerd/workflowActors.ts";
import { failNthCall } from "#test/support/workflow/actorRpcFaults.ts";
import { useActorTestHost } from "./WorkflowRun.fixture.ts";

const passThrough = (_call: ActorCall, invoke: () => Promise<unknown>) => invoke();

describe("a parent whose call to start a child fails after the child started", () => {
  useActorTestHost();
  beforeEach(() => {
    workflow("rpcFaults.kid", { start: async () => ({ done: true, result: "kid" }) });
    workflow(
      "rpcFaults.parent",
      {
        start: async () => ({ step: "collect", children: [{ workflow: "rpcFaults.kid", data: null }] }),
        collect: async (ctx) => ({ done: true, result: (ctx.children ?? []).map((c) => c.runId) }),
      },
      { backoff: { initialMS: 5, maxMS: 5, jitter: 0 } },
    );
  });
  afterEach(() => {
    actorCalls.around = passThrough;
  });

  it("retries the step, gets the child's result, and the index lists the child (it ended within its start)", async () => {
    // Call 1 is the runtime's start of the parent, call 2 the parent's start of its child.
    actorCalls.around = failNthCall("start", 2, "after");
    const parent = await workflow.start("rpcFaults.parent", null);
    const [kid] = (await parent.result()) as string[];
    actorCalls.around = passThrough;
    const events = (await workflow.get(parent.id))!;
    expect(events.status).toBe("completed");
    expect(await runIndexOf(actorEnv).get(kid!)).toMatchObject({ id: kid, status: "completed" });
  });
});
