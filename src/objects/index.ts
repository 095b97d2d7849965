// The Durable Object classes a project worker exports, under their deployed class names, when it uses
// workflows (the build adds this export only then). Their entries are timed on the meter when it is on.
import { meterActorEntries } from "./actorEntryMeter.ts";
import { WorkflowFlowKeyActor } from "./WorkflowFlowKeyActor.ts";
import { WorkflowRunActor } from "./WorkflowRun.ts";
import { WorkflowRunIndexActor } from "./WorkflowRunIndexActor.ts";

for (const actorClass of [WorkflowRunActor, WorkflowRunIndexActor, WorkflowFlowKeyActor]) meterActorEntries(actorClass);

export { WorkflowRunActor as WorkflowRun };
export { WorkflowRunIndexActor as WorkflowRunIndex };
export { WorkflowFlowKeyActor as WorkflowFlowKey };
