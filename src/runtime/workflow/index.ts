import type { WorkflowActorEnv } from "./actorClient.ts";
import { onPlatformInit, registerCron, registerInternalRoute, registerMetadata } from "../entry/platformHooks.ts";
import type { PlatformEnv } from "../entry/platformEnv.ts";
import { durableObjectWorkflowBackend } from "./durableObjectBackend.ts";
import { sweepStuckRuns } from "./recoverySweep.ts";
import { handleWorkflowRoute } from "./workflowRoutes.ts";
import { installWorkflowBackend, setCronRegistrar, workflow, workflowDefinitions } from "../../engine/workflowApi.ts";

/**
 * The workflow capability of a project worker. Evaluated only when user code
 * imports `workflow` (or `NonRetryableError`) from `platform`; it plugs the
 * engine into the entry wrapper: the recovery cron, the internal routes, the
 * Durable Object backend once the environment is known, and build metadata.
 */
function hasActors(env: PlatformEnv): env is WorkflowActorEnv {
  return Boolean(env.WORKFLOW_RUNS && env.WORKFLOW_RUN_INDEX);
}

setCronRegistrar((cron) =>
  registerCron({
    ...cron,
    run: async (env) => (hasActors(env) ? sweepStuckRuns(env) : "Re-enqueued 0 workflow(s)"),
  }),
);

onPlatformInit((env) => {
  if (hasActors(env)) installWorkflowBackend(durableObjectWorkflowBackend(env));
});

registerInternalRoute("__workflow", async (request, env, _ctx, rest) => {
  if (!hasActors(env)) return Response.json({ error: { code: "not_found", message: "This project has no workflow actors." } }, { status: 404 });
  return handleWorkflowRoute(request, env, rest);
});

registerMetadata("workflows", () =>
  workflowDefinitions().map((d) => ({
    name: d.name,
    steps: Object.keys(d.steps),
    maxAttempts: d.maxAttempts,
    backoff: d.backoff,
    stepTimeoutMS: d.stepTimeoutMS,
  })),
);

export { workflow };
export { NonRetryableError } from "../../engine/nonRetryableError.ts";
