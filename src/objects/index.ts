// The Durable Object classes a project worker exports when it uses workflows
// (the build adds this export only then).
export { WorkflowRun } from "./WorkflowRun.ts";
export { WorkflowRunIndex } from "./WorkflowRunIndex.ts";
