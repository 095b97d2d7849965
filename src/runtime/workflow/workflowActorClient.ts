import type { PlatformEnv } from "../entry/platformEnv.ts";
import { actorClient, type ActorClient } from "../../objects/actorClient.ts";
import type { RunIndexEnv } from "../../objects/runIndexClient.ts";
import type { FlowKeyEnv } from "../../objects/flowKeyClient.ts";
import type { WorkflowRunActor } from "../../objects/WorkflowRun.ts";

// The actor class is imported as a type only (it imports cloudflare:workers),
// so the `platform` module stays importable outside workerd.

/**
 * A project worker's bindings when it uses workflows: one run actor per workflow id, the run index,
 * and (absent from a worker deployed before flow control) one actor per flow key.
 */
export interface WorkflowActorEnv extends PlatformEnv, RunIndexEnv, Partial<FlowKeyEnv> {
  WORKFLOW_RUNS: DurableObjectNamespace<WorkflowRunActor>;
}

export type WorkflowRunClient = ActorClient<WorkflowRunActor>;

export function workflowRunActor(env: WorkflowActorEnv, id: DurableObjectId): WorkflowRunClient {
  return actorClient<WorkflowRunActor>(env.WORKFLOW_RUNS.get(id));
}
