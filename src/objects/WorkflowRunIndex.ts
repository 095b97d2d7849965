// The design card's path for a project's run-index actor, under its deployed class name; the class lives with the workflow runtime.
export { WorkflowRunIndexActor as WorkflowRunIndex } from "../runtime/workflow/actors/WorkflowRunIndexActor.ts";
