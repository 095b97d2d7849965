import { PlatformError } from "../../core/errors.ts";
import { runIndexOf } from "../../objects/runIndexClient.ts";
import { workflowRunActor, type WorkflowActorEnv, type WorkflowRunClient } from "./workflowActorClient.ts";
import type { WorkflowBackend } from "../../engine/workflowApi.ts";
import { onceRunKey } from "../../engine/createRun.ts";
import { createRunIndexReporter } from "./runIndexReporter.ts";

const RUN_ID = /^([0-9a-f]{64})\.([a-z0-9]{12})$/;
/** How long one `waitForTerminal` call to the actor may hang before the caller asks again. */
const WAIT_SLICE_MS = 20_000;

function randomSuffix(): string {
  return [...crypto.getRandomValues(new Uint8Array(12))].map((b) => (b % 36).toString(36)).join("");
}

/**
 * A run id carries the id of the actor that holds it (`<actor id>.<random>`),
 * so `workflow.get(runId)` finds the run from its id alone.
 */
export function actorForRun(env: WorkflowActorEnv, runId: string): WorkflowRunClient | null {
  const match = RUN_ID.exec(runId);
  if (!match) return null;
  let actorId: DurableObjectId;
  try {
    actorId = env.WORKFLOW_RUNS.idFromString(match[1]!);
  } catch {
    // 64 hex digits that are not an id of this namespace (a made-up or foreign run id): no such run.
    return null;
  }
  return workflowRunActor(env, actorId);
}

/** The workflow backend of a deployed (or `platform dev`) project: one WorkflowRunActor per workflow id. */
export function durableObjectWorkflowBackend(env: WorkflowActorEnv): WorkflowBackend {
  const index = createRunIndexReporter(() => runIndexOf(env));
  return {
    async start(name, data, { id, once }) {
      // Named actors make "at most one active run per workflow id" a single-threaded check.
      const actorId = id === undefined ? env.WORKFLOW_RUNS.newUniqueId() : env.WORKFLOW_RUNS.idFromName(id);
      // A `once` run's suffix comes from its workflow id, so its actor refuses a second one.
      const suffix = once && id !== undefined ? (await onceRunKey(id)).slice(0, 12) : randomSuffix();
      const runId = `${actorId.toString()}.${suffix}`;
      const { summary, ...started } = await workflowRunActor(env, actorId).start({
        runId,
        workflowId: id ?? runId,
        name,
        data,
        once: once === true && id !== undefined,
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
