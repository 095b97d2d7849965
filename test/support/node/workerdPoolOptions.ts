import path from "node:path";
import { readDeployedWorkers } from "#src/dev/cli/dev/workerd/deployedWorkers.ts";
import { localScriptBindings } from "#src/dev/cli/dev/workerd/localScriptBindings.ts";
import { localWorker } from "#src/dev/cli/dev/workerd/localWorker.ts";
import { PLATFORM_SERVICES, projectScriptBindings } from "#src/workers/api/projectScriptBindings.ts";

/** The actor classes the workerd test harness (test/support/workerd/harness.ts) exports as a project does. */
const PROJECT_ACTOR_CLASSES = ["WorkflowRun", "WorkflowRunIndex", "WorkflowFlowKey"];

/**
 * The workerd test pool's bindings, from the deploy's own sources: the API
 * worker's D1 databases, actors and queue producers as its wrangler.toml
 * declares them (run locally, as `platform dev` runs it), and a project's
 * actors as the API worker binds them when it uploads a project. The harness
 * worker exports every one of those classes.
 */
export async function workerdPoolBindings(repoRoot: string) {
  const api = (await readDeployedWorkers(repoRoot)).find((worker) => worker.name === PLATFORM_SERVICES.PLATFORM_API);
  if (!api) throw new Error(`No ${PLATFORM_SERVICES.PLATFORM_API} among the platform's wrangler configs.`);
  const local = localWorker(api, path.join(repoRoot, "test/support/workerd/harness.ts"), { scripts: {}, bindings: {} });
  const project = localScriptBindings(
    projectScriptBindings({ id: 0, slug: "", script_name: "", worker_secret: "" }, PROJECT_ACTOR_CLASSES),
  );
  return {
    compatibilityDate: local.compatibilityDate,
    compatibilityFlags: local.compatibilityFlags,
    d1Databases: local.d1Databases,
    durableObjects: { ...project.durableObjects, ...local.durableObjects },
    queueProducers: local.queueProducers,
  };
}
