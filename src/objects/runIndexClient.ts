import { actorClient, type ActorClient } from "./actorClient.ts";
import type { WorkflowRunIndexActor } from "./WorkflowRunIndexActor.ts";

// The actor class is imported as a type only (it imports cloudflare:workers),
// so the `platform` module stays importable outside workerd.

/** The binding of a project's run index: one actor, named "index". */
export interface RunIndexEnv {
  WORKFLOW_RUN_INDEX: DurableObjectNamespace<WorkflowRunIndexActor>;
}

export type RunIndexClient = ActorClient<WorkflowRunIndexActor>;

export function runIndexOf(env: RunIndexEnv): RunIndexClient {
  return actorClient<WorkflowRunIndexActor>(env.WORKFLOW_RUN_INDEX.get(env.WORKFLOW_RUN_INDEX.idFromName("index")));
}
