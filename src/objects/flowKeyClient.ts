import { actorClient, type ActorClient } from "./actorClient.ts";
import type { WorkflowFlowKeyActor } from "./WorkflowFlowKeyActor.ts";

// The actor class is imported as a type only (it imports cloudflare:workers),
// so the `platform` module stays importable outside workerd.

/** The binding of a project's flow keys: one actor per (workflow, key) of a workflow with flow control. */
export interface FlowKeyEnv {
  WORKFLOW_FLOW_KEYS: DurableObjectNamespace<WorkflowFlowKeyActor>;
}

export type FlowKeyClient = ActorClient<WorkflowFlowKeyActor>;

/** The actor that holds the queue and slots of `key` of workflow `workflowName`. */
export function flowKeyActorOf(env: FlowKeyEnv, workflowName: string, key: string): FlowKeyClient {
  const id = env.WORKFLOW_FLOW_KEYS.idFromName(JSON.stringify([workflowName, key]));
  return actorClient<WorkflowFlowKeyActor>(env.WORKFLOW_FLOW_KEYS.get(id));
}
