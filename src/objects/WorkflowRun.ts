// The design card's path for the workflow-instance actor; the class lives with the workflow runtime.
export { WorkflowRun } from "../runtime/workflow/actors/WorkflowRunActor.ts";
