// The Durable Object classes a project worker exports, under their deployed class names, when it uses
// workflows (the build adds this export only then).
export { WorkflowRunActor as WorkflowRun } from "./WorkflowRun.ts";
export { WorkflowRunIndexActor as WorkflowRunIndex } from "./WorkflowRunIndexActor.ts";
export { WorkflowFlowKeyActor as WorkflowFlowKey } from "./WorkflowFlowKeyActor.ts";
