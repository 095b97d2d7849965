import { abortAllDurableObjects, env, runInDurableObject } from "cloudflare:test";
import { durableObjectSql } from "#src/objects/durableObjectSql.ts";
import { workflowRunHost } from "#src/objects/workflowRunHost.ts";
import type { WorkflowActorEnv } from "#src/runtime/workflow/workflowActorClient.ts";
import { createSqlEventStore } from "#src/engine/storage/sqlEventStore.ts";
import { durableObjectWorkflowBackend } from "#src/runtime/workflow/durableObjectBackend.ts";
import { sweepStuckRuns } from "#src/runtime/workflow/recoverySweep.ts";
import { describeEventStoreConformance } from "#test/conformance/eventStoreConformance.ts";
import { describeWorkflowConformance } from "#test/conformance/workflowConformance.ts";

/**
 * The two conformance suites the memory and node:sqlite implementations pass
 * (test/engine/*, test/runtime/node/*), run against the Durable Object implementation.
 */

// The store a WorkflowRun actor keeps its log in: createSqlEventStore over the
// actor's own SQLite, a fresh actor per case. The store is built and used only
// inside the actor (runInDurableObject): from the test's I/O context every
// call would throw "Cannot perform I/O on behalf of a different Durable Object".
describeEventStoreConformance("Durable Object SQLite (a WorkflowRun actor's storage)", async () => {
  const actor = env.WORKFLOW_RUNS.get(env.WORKFLOW_RUNS.newUniqueId());
  const store = await runInDurableObject(actor, (_instance, state) =>
    createSqlEventStore(durableObjectSql(state.storage)),
  );
  return { store, run: (body) => runInDurableObject(actor, () => body()) };
});

// Real WorkflowRun actors driven by their real alarms (first start, retry
// backoff, step timeouts, sleeps), listed through the real per-project index
// actor. A restart is a hard reset of every actor, as a deploy or a machine
// loss would do: the storage and alarms stay, what ran in memory is gone.
// What the runtime's workflow capability tells the actors when it loads (src/runtime/workflow/index.ts):
// the index actor's bulk operations cancel and rerun runs through this backend.
workflowRunHost.runControls = (actorEnv) => durableObjectWorkflowBackend(actorEnv as unknown as WorkflowActorEnv);

describeWorkflowConformance("Durable Objects", () => {
  const backend = durableObjectWorkflowBackend(env as unknown as WorkflowActorEnv);
  return {
    backend,
    close: () => {},
    async restart() {
      await abortAllDurableObjects();
      return backend;
    },
    sweep: async () => void (await sweepStuckRuns(env as unknown as WorkflowActorEnv)),
  };
});
