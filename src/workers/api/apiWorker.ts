import { LIVE_RUN_ROUTES } from "../../contracts/liveRunBudget.ts";
import { SESSION_ROUTES } from "../../contracts/signInSessions.ts";
import { createPlatformRouter, type PlatformRouter } from "../../core/web/router.ts";
import { resolveDispatcher } from "../dispatch/dispatcher.ts";
import { issueUserToken } from "./adminRoutes.ts";
import { redeemCallbackToken } from "./callbackTokenRedeemRoute.ts";
import { collectCliLogin, revokeCliToken, startCliLogin, whoAmI } from "./cliLoginRoutes.ts";
import { putProjectDeployment } from "./deploymentRoute.ts";
import type { ApiEnv, WorkflowExecuteMessage } from "./env.ts";
import { holdLiveRuns, releaseLiveRuns } from "./liveRunRoutes.ts";
import { createOAuthSession } from "./oauthSessionRoute.ts";
import { runDueCrons } from "./projectCrons.ts";
import { listPlugins } from "./pluginCatalogRoute.ts";
import {
  checkProjectSession,
  endProjectSessions,
  endProjectUserSessions,
  startProjectSession,
} from "./projectSessionRoutes.ts";
import { uninstallProjectPlugin } from "./projectPluginUninstallRoute.ts";
import { listProjectSchedules } from "./projectSchedulesRoute.ts";
import { listProjectWebhookEndpoints } from "./projectWebhooksRoute.ts";
import { listProjectPlugins } from "./projectPluginsRoute.ts";
import { createProject, getProject, listProjects, putProjectMetadata } from "./projectRoutes.ts";
import { readProjectLog, recordTraces } from "./projectLogs/projectLogRoutes.ts";
import { deleteSecret, listSecrets, putSecret } from "./projectSecretRoutes.ts";
import {
  cancelProjectWorkflowRun,
  getProjectWorkflowRun,
  streamProjectWorkflowRun,
  listProjectWorkflowRuns,
  runProjectCron,
  sendProjectWorkflowEvent,
  pauseProjectWorkflowRun,
  resumeProjectWorkflowRun,
  rerunProjectWorkflowRun,
  cancelManyProjectWorkflowRuns,
  rerunManyProjectWorkflowRuns,
  sendOrStartProjectWorkflow,
  startProjectWorkflow,
} from "./projectWorkflowRoutes.ts";
import { withCliUser } from "./withCliUser.ts";
import { consumeWorkflowQueue, enqueueWorkflowExecution } from "./workflowExecution.ts";

export interface ApiWorkerOptions<Env extends ApiEnv> {
  /** Mounts routes after the platform's own: `platform dev` adds its dev-only routes here (src/dev/routes/devApiWorker.ts). */
  extraRoutes?: (router: PlatformRouter<Env>) => void;
}

/**
 * The API worker's handlers: its routes (CLI, console, admin, projects'
 * internal calls), the workflow queue's consumer and the every-minute cron
 * trigger. The deployed worker is `createApiWorker()` (index.ts).
 */
export function createApiWorker<Env extends ApiEnv = ApiEnv>(options: ApiWorkerOptions<Env> = {}) {
  const router = apiRouter<Env>();
  options.extraRoutes?.(router);

  return {
    fetch: router.fetch,

    queue: (batch: MessageBatch<WorkflowExecuteMessage>, env: Env) =>
      consumeWorkflowQueue(batch, env, resolveDispatcher(env)),

    /** Traces of the project workers that name this worker their tail consumer: into each project's log. */
    tail(events: TraceItem[], env: Env, ctx: ExecutionContext) {
      const wired = (ctx as ExecutionContext & { props?: { scriptName?: unknown } }).props?.scriptName;
      ctx.waitUntil(recordTraces(env, events, typeof wired === "string" ? wired : undefined));
    },

    async scheduled(controller: ScheduledController, env: Env, ctx: ExecutionContext) {
      ctx.waitUntil(runDueCrons(env.DB, resolveDispatcher(env), controller.scheduledTime));
    },
  } satisfies ExportedHandler<Env, WorkflowExecuteMessage>;
}

/**
 * The deployed API worker's routes, exactly. Their first path segments are
 * reserved slugs (reservedSlugs.ts `PLATFORM_ROOT_PATHS`).
 */
export function apiRouter<Env extends ApiEnv = ApiEnv>(): PlatformRouter<Env> {
  return (
    createPlatformRouter<Env>("api")
      .get("/health", () => Response.json({ ok: true }))
      // People who open the API's address in a browser want the console (static files under /console/, wrangler.toml [assets]).
      .get("/", (request) => Response.redirect(new URL("/console/", request.url).href, 302))
      .post("/admin/users", issueUserToken)
      .post("/cli/login", startCliLogin)
      .post("/cli/login/token", collectCliLogin)
      .get("/cli/whoami", withCliUser, whoAmI)
      .post("/cli/logout", withCliUser, revokeCliToken)
      .post("/projects", withCliUser, createProject)
      .get("/projects", withCliUser, listProjects)
      .get("/projects/:slug", withCliUser, getProject)
      .put("/projects/:slug/metadata", withCliUser, putProjectMetadata)
      .put("/projects/:slug/deployment", withCliUser, putProjectDeployment)
      .get("/projects/:slug/logs", withCliUser, readProjectLog)
      .get("/projects/:slug/secrets", withCliUser, listSecrets)
      .put("/projects/:slug/secrets/:name", withCliUser, putSecret)
      .delete("/projects/:slug/secrets/:name", withCliUser, deleteSecret)
      .get("/projects/:slug/workflows", withCliUser, listProjectWorkflowRuns)
      .post("/projects/:slug/workflows", withCliUser, startProjectWorkflow)
      .get("/projects/:slug/workflows/:runId", withCliUser, getProjectWorkflowRun)
      .get("/projects/:slug/workflows/:runId/stream", withCliUser, streamProjectWorkflowRun)
      .post("/projects/:slug/workflows/:runId/cancel", withCliUser, cancelProjectWorkflowRun)
      .post("/projects/:slug/workflows/:runId/events", withCliUser, sendProjectWorkflowEvent)
      .post("/projects/:slug/workflows/:runId/pause", withCliUser, pauseProjectWorkflowRun)
      .post("/projects/:slug/workflows/:runId/resume", withCliUser, resumeProjectWorkflowRun)
      .post("/projects/:slug/workflows/:runId/rerun", withCliUser, rerunProjectWorkflowRun)
      .post("/projects/:slug/workflows/cancel", withCliUser, cancelManyProjectWorkflowRuns)
      .post("/projects/:slug/workflows/send", withCliUser, sendOrStartProjectWorkflow)
      .post("/projects/:slug/workflows/rerun", withCliUser, rerunManyProjectWorkflowRuns)
      .post("/projects/:slug/crons/:name/run", withCliUser, runProjectCron)
      .get("/projects/:slug/schedules", withCliUser, listProjectSchedules)
      .get("/projects/:slug/webhooks", withCliUser, listProjectWebhookEndpoints)
      .get("/plugins", withCliUser, listPlugins)
      .get("/projects/:slug/plugins", withCliUser, listProjectPlugins)
      .delete("/projects/:slug/plugins/:plugin", withCliUser, uninstallProjectPlugin)
      .post("/oauth/session", withCliUser, createOAuthSession)
      .post("/internal/workflow/execute", enqueueWorkflowExecution)
      .post(LIVE_RUN_ROUTES.hold, holdLiveRuns)
      .post(LIVE_RUN_ROUTES.release, releaseLiveRuns)
      .post("/internal/auth/redeem", redeemCallbackToken)
      .post(SESSION_ROUTES.start, startProjectSession)
      .post(SESSION_ROUTES.check, checkProjectSession)
      .post(SESSION_ROUTES.end, endProjectSessions)
      .post(SESSION_ROUTES.endUser, endProjectUserSessions)
  );
}
