// The worker the workerd tests run in: the Durable Object classes a workflow
// project exports (under their deployed names) and the platform's own actors,
// each recording its construction (constructedActors.ts: which actors the next reset must wake).
import * as projectActors from "#src/objects/index.ts";
import { LiveRunBudget as LiveRunBudgetActor } from "#src/objects/LiveRunBudget.ts";
import { RateLimiter as RateLimiterActor } from "#src/objects/RateLimiter.ts";
import { SessionCode as SessionCodeActor } from "#src/objects/SessionCode.ts";
import { ProjectLog as ProjectLogActor } from "#src/workers/api/projectLogs/ProjectLog.ts";
import { recordingConstruction } from "./constructedActors.ts";

export const WorkflowRun = recordingConstruction(projectActors.WorkflowRun);
export const WorkflowRunIndex = recordingConstruction(projectActors.WorkflowRunIndex);
export const WorkflowFlowKey = recordingConstruction(projectActors.WorkflowFlowKey);
export const LiveRunBudget = recordingConstruction(LiveRunBudgetActor);
export const RateLimiter = recordingConstruction(RateLimiterActor);
export const SessionCode = recordingConstruction(SessionCodeActor);
export const ProjectLog = recordingConstruction(ProjectLogActor);

export default { fetch: () => new Response("test harness") };
