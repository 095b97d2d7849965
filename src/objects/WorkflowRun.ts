// The design card's path for the workflow-instance actor, under its deployed class name; the class lives with the workflow runtime.
export { WorkflowRunActor as WorkflowRun } from "../runtime/workflow/actors/WorkflowRunActor.ts";
