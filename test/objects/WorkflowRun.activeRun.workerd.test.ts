/**
 * One active run per workflow id: the actor named by the id holds at most one running run; a
 * run without an id gets an actor of its own.
 */
import { env, listDurableObjectIds, runInDurableObject } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { workflow } from "#src/engine/api/workflowApi.ts";
import { actorIdOf } from "#test/support/workerd/index.ts";
import { rejection } from "#test/support/workflow/index.ts";
import { gates, register, useActorTestHost } from "./WorkflowRun.fixture.ts";

useActorTestHost();

describe("WorkflowRunActor: one active run per workflow id", () => {
  beforeEach(() => {
    register.gated("single.gated");
    register.other("single.other");
  });

  it("a second start with an active id returns the first run (created: false); once it finished, a new run is created in the same actor", async () => {
    gates.gateFor("order-7");
    const first = await workflow.start("single.gated", { n: 1 }, { id: "order-7" });
    const again = await workflow.start("single.gated", { n: 2 }, { id: "order-7" });
    expect(first.created).toBe(true);
    expect(again).toMatchObject({ id: first.id, workflowId: "order-7", created: false });
    // Another workflow cannot take the id while it is active.
    const taken = await rejection(workflow.start("single.other", null, { id: "order-7" }));
    expect(taken.code).toBe("already_active");
    expect(taken.details).toMatchObject({ activeRunId: first.id });

    const actorId = env.WORKFLOW_RUNS.idFromName("order-7");
    const runsInActor = () =>
      runInDurableObject(env.WORKFLOW_RUNS.get(actorId), (_instance, state) =>
        state.storage.sql
          .exec<{ run_id: string; status: string }>("SELECT run_id, status FROM _workflow_runs ORDER BY position")
          .toArray(),
      );
    expect(await runsInActor()).toEqual([{ run_id: first.id, status: "running" }]);

    gates.gateFor("order-7").open();
    await expect(again.result()).resolves.toEqual({ data: { n: 1 }, opened: true });
    gates.forget("order-7");
    gates.gateFor("order-7");
    const later = await workflow.start("single.gated", { n: 3 }, { id: "order-7" });
    expect(later).toMatchObject({ workflowId: "order-7", created: true });
    expect(later.id).not.toBe(first.id);
    expect(actorIdOf(later.id).equals(actorId)).toBe(true);
    expect(await runsInActor()).toEqual([
      { run_id: first.id, status: "completed" },
      { run_id: later.id, status: "running" },
    ]);
    const ids = await listDurableObjectIds(env.WORKFLOW_RUNS);
    expect(ids.filter((id) => id.equals(actorId))).toHaveLength(1);
    gates.gateFor("order-7").open();
    await expect(later.result()).resolves.toEqual({ data: { n: 3 }, opened: true });
  });

  it("runs without an id get an actor each", async () => {
    const a = await workflow.start("single.other");
    const b = await workflow.start("single.other");
    expect(a.workflowId).toBe(a.id);
    expect(actorIdOf(a.id).equals(actorIdOf(b.id))).toBe(false);
    await expect(a.result()).resolves.toBe("other");
    await expect(b.result()).resolves.toBe("other");
  });
});
