import { createApiWorker } from "../../workers/api/apiWorker.ts";
import { withCliUser } from "../../workers/api/withCliUser.ts";
import type { DevApiEnv } from "./devApiEnv.ts";
import { showLocalChat } from "./localChat.ts";
import { listOutbox, showOutboxEmail } from "./localOutbox.ts";
import { linkLocalProject } from "./localProjectRoute.ts";
import { putLocalSourceMap } from "./localSourceMapRoute.ts";
import { sendPluginTestEvent } from "./pluginTestEvents.ts";

// The same actor classes as the deployed API worker (one list).
export * from "../../workers/api/apiActorClasses.ts";

/**
 * The API worker `platform dev` runs (src/dev/cli/dev/workerd/buildPlatformWorkers.ts):
 * the deployed worker's routes plus the dev-only ones, which reach the fake
 * providers and the local project's record. The deployed worker
 * (src/workers/api/index.ts) has none of them.
 */
const worker = createApiWorker<DevApiEnv>({
  extraRoutes: (router) =>
    router
      .post("/projects/:slug/plugins/:plugin/test-events", withCliUser, sendPluginTestEvent)
      .get("/projects/:slug/plugins/:plugin/chat", withCliUser, showLocalChat)
      .put("/projects/:slug/local", withCliUser, linkLocalProject)
      .put("/projects/:slug/source-map", withCliUser, putLocalSourceMap)
      .get("/projects/:slug/outbox", withCliUser, listOutbox)
      .get("/projects/:slug/outbox/:id", withCliUser, showOutboxEmail),
});

/** Names the dev-only routes the console may use, space-separated (src/console/public/console/app.js reads it). */
const LOCAL_ROUTES_HEADER = "X-Platform-Local-Routes";

/**
 * The console asks `GET /cli/whoami` first; this worker's answer names the
 * dev-only routes it may use (`X-Platform-Local-Routes`), so under `platform
 * up` and deployed, where they do not exist, it never requests them.
 */
export default {
  ...worker,
  async fetch(request: Request, env: DevApiEnv, ctx: ExecutionContext): Promise<Response> {
    const response = await worker.fetch(request, env, ctx);
    if (new URL(request.url).pathname !== "/cli/whoami" || !response.ok) return response;
    const answered = new Response(response.body, response);
    answered.headers.set(LOCAL_ROUTES_HEADER, "outbox");
    return answered;
  },
};
