// The worker the workerd tests run in: the Durable Object classes a workflow
// project exports (under their deployed names) and the platform's own actors.
export { WorkflowRun, WorkflowRunIndex } from "../../../src/objects/index.ts";
export { RateLimiter } from "../../../src/platform/actors/RateLimiter.ts";
export { SessionCode } from "../../../src/platform/actors/SessionCode.ts";

export default { fetch: () => new Response("test harness") };
