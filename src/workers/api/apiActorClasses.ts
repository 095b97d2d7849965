// The actor classes the API worker exports (wrangler.toml's durable_objects), in one list: the
// deployed worker (index.ts) and `platform dev`'s (src/dev/routes/devApiWorker.ts) both re-export it,
// so a class added here exists in both (test/tooling/apiActorClasses.test.ts). Plugin workers bind
// RateLimiter and SessionCode with script_name = "platform-api" (docs/plugins-contract.md).
export { LiveRunBudget } from "../../objects/LiveRunBudget.ts";
export { RateLimiter } from "../../objects/RateLimiter.ts";
export { SessionCode } from "../../objects/SessionCode.ts";
// Each project's log (platform logs), fed by this worker's tail handler.
export { ProjectLog } from "./projectLogs/ProjectLog.ts";
