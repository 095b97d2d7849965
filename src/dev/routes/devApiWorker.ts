import { createApiWorker } from "../../platform/api/apiWorker.ts";
import { withCliUser } from "../../platform/api/withCliUser.ts";
import type { DevApiEnv } from "./devApiEnv.ts";
import { listOutbox, showOutboxEmail } from "./localOutbox.ts";
import { linkLocalProject } from "./localProjectRoute.ts";
import { sendPluginTestEvent } from "./pluginTestEvents.ts";

// The same actor classes as the deployed API worker: plugin workers bind them with script_name = "platform-api".
export { RateLimiter } from "../../platform/actors/RateLimiter.ts";
export { SessionCode } from "../../platform/actors/SessionCode.ts";

/**
 * The API worker `platform dev` runs (src/dev/cli/dev/buildPlatformWorkers.ts):
 * the deployed worker's routes plus the dev-only ones, which reach the fake
 * providers and the local project's record. The deployed worker
 * (src/platform/api/index.ts) has none of them.
 */
export default createApiWorker<DevApiEnv>({
  extraRoutes: (router) =>
    router
      .post("/projects/:slug/plugins/:plugin/test-events", withCliUser, sendPluginTestEvent)
      .put("/projects/:slug/local", withCliUser, linkLocalProject)
      .get("/projects/:slug/outbox", withCliUser, listOutbox)
      .get("/projects/:slug/outbox/:id", withCliUser, showOutboxEmail),
});
