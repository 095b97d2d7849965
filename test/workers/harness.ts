// The worker the workerd tests run in: the platform prelude first (as in a
// built project), then the Durable Object classes a workflow project exports.
import "../../src/runtime/entry/prelude.ts";

export { WorkflowRun, WorkflowRunIndex } from "../../src/objects/index.ts";
export { RateLimiter } from "../../src/platform/actors/RateLimiter.ts";
export { SessionCode } from "../../src/platform/actors/SessionCode.ts";

export default { fetch: () => new Response("test harness") };
