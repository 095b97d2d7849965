// The worker the workerd tests run in: the Durable Object classes a workflow
// project exports (under their deployed names) and the platform's own actors.
export { WorkflowRun, WorkflowRunIndex, WorkflowFlowKey } from "#src/objects/index.ts";
export { LiveRunBudget } from "#src/objects/LiveRunBudget.ts";
export { RateLimiter } from "#src/objects/RateLimiter.ts";
export { SessionCode } from "#src/objects/SessionCode.ts";
export { ProjectLog } from "#src/workers/api/projectLogs/ProjectLog.ts";

export default { fetch: () => new Response("test harness") };
