import { createApiWorker } from "./apiWorker.ts";

// Actors plugin workers bind with script_name = "platform-api" (docs/plugins-contract.md).
export { LiveRunBudget } from "../../objects/LiveRunBudget.ts";
export { RateLimiter } from "../../objects/RateLimiter.ts";
export { SessionCode } from "../../objects/SessionCode.ts";
// Each project's log (platform logs), fed by this worker's tail handler.
export { ProjectLog } from "./projectLogs/ProjectLog.ts";

/** The deployed API worker: the platform's routes only (`platform dev` runs src/dev/routes/devApiWorker.ts instead). */
export default createApiWorker();
