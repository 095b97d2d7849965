// The design card's path for a project's run-index actor; the class lives with the workflow runtime.
export { WorkflowRunIndex } from "../runtime/workflow/actors/WorkflowRunIndexActor.ts";
