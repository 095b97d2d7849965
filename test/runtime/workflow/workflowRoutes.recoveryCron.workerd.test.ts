/**
 * The recovery cron a project gets with its first workflow() call: it sweeps the project's
 * active runs through the index and re-enqueues the stuck ones.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createSqlEventStore } from "#src/engine/storage/sqlEventStore.ts";
import { durableObjectSql } from "#src/objects/durableObjectSql.ts";
import { runIndexOf } from "#src/objects/runIndexClient.ts";
import { project, useProjectWorker } from "./workflowRoutes.fixture.ts";
import { call, waitUntilTerminal } from "./workflowRoutes.client.ts";

useProjectWorker();

describe("POST /__cron/__workflow-recovery (registered by the first workflow() call)", () => {
  it("sweeps the project's active runs through the index and answers Re-enqueued N workflow(s)", async () => {
    // A run whose creation was written but whose first step never started (stuck_created).
    const actor = env.WORKFLOW_RUNS.get(env.WORKFLOW_RUNS.idFromName("stuck-1"));
    const runId = `${actor.id}.stuck0000001`;
    const summary = await runInDurableObject(actor, (_instance, state) => {
      const store = createSqlEventStore(durableObjectSql(state.storage));
      store.createRunIfNoActive({
        runId,
        workflowId: "stuck-1",
        seq: 1,
        type: "workflow_created",
        payload: { workflowName: "greet", writes: { data: { name: "Cy" } } },
        at: Date.now() - 60_000,
      });
      return store.getReport(runId)!;
    });
    await runIndexOf(project.env).record([summary]);

    const response = await call("POST", "/__cron/__workflow-recovery");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ cron: "__workflow-recovery", output: "Re-enqueued 1 workflow(s)" });
    expect(await waitUntilTerminal(runId)).toMatchObject({ status: "completed", result: { text: "hello Cy" } });
    expect(await (await call("POST", "/__cron/__workflow-recovery")).json()).toEqual({
      cron: "__workflow-recovery",
      output: "Re-enqueued 0 workflow(s)",
    });
  });
});
