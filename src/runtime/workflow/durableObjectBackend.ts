import { PlatformError } from "../../core/errors.ts";
import { runIndexOf } from "../../objects/runIndexClient.ts";
import { actorIdOfRun, randomRunSuffix } from "../../objects/runIds.ts";
import { workflowRunActor, type WorkflowActorEnv, type WorkflowRunClient } from "./workflowActorClient.ts";
import type { WorkflowBackend } from "../../engine/workflowApi.ts";
import { createRunIndexReporter } from "./runIndexReporter.ts";

/** How long one `waitForTerminal` call to the actor may hang before the caller asks again. */
const WAIT_SLICE_MS = 20_000;

/** The actor holding a run, from the run's id alone (see objects/runIds.ts); null for an id no actor holds. */
export function actorForRun(env: WorkflowActorEnv, runId: string): WorkflowRunClient | null {
  const actorId = actorIdOfRun(env.WORKFLOW_RUNS, runId);
  return actorId ? workflowRunActor(env, actorId) : null;
}

/** The workflow backend of a deployed (or `platform dev`) project: one WorkflowRunActor per workflow id. */
export function durableObjectWorkflowBackend(env: WorkflowActorEnv): WorkflowBackend {
  const index = createRunIndexReporter(() => runIndexOf(env));
  return {
    async start(name, data, { id }) {
      // Named actors make "at most one active run per workflow id" a single-threaded check.
      const actorId = id === undefined ? env.WORKFLOW_RUNS.newUniqueId() : env.WORKFLOW_RUNS.idFromName(id);
      const runId = `${actorId.toString()}.${randomRunSuffix()}`;
      const { summary, ...started } = await workflowRunActor(env, actorId).start({
        runId,
        workflowId: id ?? runId,
        name,
        data,
      });
      // Listed by the time the caller hears of the run; runs started together are indexed in one call.
      if (summary) await index.report(summary);
      return started;
    },

    async get(runId) {
      const actor = actorForRun(env, runId);
      return actor ? actor.get(runId) : null;
    },

    list: (query) => runIndexOf(env).list(query),

    async send(runId, name, payload) {
      const actor = actorForRun(env, runId);
      if (!actor) throw new PlatformError("not_found", `Workflow run "${runId}" does not exist`);
      await actor.send(runId, name, payload);
    },

    async cancel(runId, reason) {
      const actor = actorForRun(env, runId);
      if (!actor) throw new PlatformError("not_found", `Workflow run "${runId}" does not exist`);
      return actor.cancel(runId, reason);
    },

    async waitForTerminal(runId) {
      const actor = actorForRun(env, runId);
      if (!actor) throw new PlatformError("not_found", `Workflow run "${runId}" does not exist`);
      for (;;) {
        const view = await actor.waitForTerminal(runId, WAIT_SLICE_MS);
        if (view) return view;
      }
    },
  };
}
