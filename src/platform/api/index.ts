import { Router, type IRequest } from "itty-router";
import { errorResponse, PlatformError } from "../../core/errors.ts";
import { resolveDispatcher } from "../dispatch/dispatcher.ts";
import { issueUserToken } from "./adminRoutes.ts";
import type { ApiEnv, WorkflowExecuteMessage } from "./env.ts";
import { runDueCrons } from "./projectCrons.ts";
import { deployProject } from "./deploymentRoute.ts";
import { getProjectWorkflowRun, listProjectWorkflowRuns, runProjectCron, startProjectWorkflow } from "./projectWorkflowRoutes.ts";
import { createProject, getProject, listProjects, putProjectMetadata } from "./projectRoutes.ts";
import { createOAuthSession } from "./oauthSessionRoute.ts";
import { listProjectPlugins } from "./projectPluginsRoute.ts";
import { sendPluginTestEvent } from "../../dev/routes/pluginTestEvents.ts";
import { consumeWorkflowQueue, enqueueWorkflowExecution } from "./workflowExecution.ts";

type Handler = (request: IRequest, env: ApiEnv, ctx: ExecutionContext) => Promise<Response>;
const route = (handler: (request: IRequest & Request, env: ApiEnv, ctx: ExecutionContext) => Promise<Response>): Handler =>
  handler as Handler;

const router = Router<IRequest, [ApiEnv, ExecutionContext]>({
  catch: (error) => {
    if (!(error instanceof PlatformError)) console.error("api: unhandled error", error);
    return errorResponse(error);
  },
});

router
  .get("/health", () => Response.json({ ok: true }))
  // People who open the API's address in a browser want the console (static files under /console/, wrangler.toml [assets]).
  .get("/", (request) => Response.redirect(new URL("/console/", request.url).href, 302))
  .post("/admin/users", route(issueUserToken))
  .post("/projects", route(createProject))
  .get("/projects", route(listProjects))
  .get("/projects/:slug", route(getProject))
  .put("/projects/:slug/metadata", route(putProjectMetadata))
  .put("/projects/:slug/deployment", route(deployProject))
  .get("/projects/:slug/workflows", route(listProjectWorkflowRuns))
  .post("/projects/:slug/workflows", route(startProjectWorkflow))
  .get("/projects/:slug/workflows/:runId", route(getProjectWorkflowRun))
  .post("/projects/:slug/crons/:name/run", route(runProjectCron))
  .get("/projects/:slug/plugins", route(listProjectPlugins))
  .post("/projects/:slug/plugins/:plugin/test-events", route(sendPluginTestEvent))
  .post("/oauth/session", route(createOAuthSession))
  .post("/internal/workflow/execute", route(enqueueWorkflowExecution))
  .all("*", (request) => errorResponse(new PlatformError("not_found", `No route for ${request.method} ${new URL(request.url).pathname}.`)));

// Actors plugin workers bind with script_name = "platform-api" (docs/plugins-contract.md).
export { RateLimiter } from "../actors/RateLimiter.ts";
export { SessionCode } from "../actors/SessionCode.ts";

export default {
  fetch: (request: Request, env: ApiEnv, ctx: ExecutionContext) => router.fetch(request, env, ctx),

  queue: (batch: MessageBatch<WorkflowExecuteMessage>, env: ApiEnv) => consumeWorkflowQueue(batch, env, resolveDispatcher(env)),

  async scheduled(controller: ScheduledController, env: ApiEnv, ctx: ExecutionContext) {
    ctx.waitUntil(runDueCrons(env.DB, resolveDispatcher(env), controller.scheduledTime));
  },
} satisfies ExportedHandler<ApiEnv, WorkflowExecuteMessage>;
