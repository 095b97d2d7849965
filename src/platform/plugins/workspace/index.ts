import { Router, type IRequest } from "itty-router";
import { PlatformError } from "../../../core/errors.ts";
import { pluginErrorResponse } from "../shared/index.ts";
import type { WorkspaceEnv } from "./env.ts";
import { handleDeploy } from "./deploy.ts";
import { handleCallback, handleInstall, page } from "./install.ts";
import { handleProxy, PROXY_ROUTES, type ProxyRoute } from "./proxy.ts";
import { handleWebhook } from "./webhook.ts";

/**
 * The workspace-chat plugin worker (`platform-plugin-workspace`): Slack's
 * Events API at /webhook, the install flow, and the proxy routes user code
 * calls through `workspace.*`.
 */
const router = Router<IRequest, [WorkspaceEnv, ExecutionContext]>();

router.post("/webhook", (request, env, ctx) => handleWebhook(request as unknown as Request, env, ctx));
router.post("/deploy", (request, env) => handleDeploy(request as unknown as Request, env));
router.get("/install", async (request, env) => {
  try {
    return await handleInstall(request as unknown as Request, env);
  } catch (error) {
    console.error("workspace plugin: install failed", error);
    return page(500, "Install failed", error instanceof PlatformError ? error.message : "Internal error.");
  }
});
router.get("/oauth/callback", async (request, env) => {
  try {
    return await handleCallback(request as unknown as Request, env);
  } catch (error) {
    console.error("workspace plugin: callback failed", error);
    return page(error instanceof PlatformError && error.code === "upstream_error" ? 502 : 500, "Install failed", error instanceof PlatformError ? error.message : "Internal error.");
  }
});
router.post("/proxy/:route", (request, env) => {
  const route = request.params.route as ProxyRoute;
  if (!(PROXY_ROUTES as readonly string[]).includes(route)) return undefined;
  return handleProxy(route, request as unknown as Request, env);
});

export default {
  async fetch(request: Request, env: WorkspaceEnv, ctx: ExecutionContext): Promise<Response> {
    try {
      const response = await router.fetch(request, env, ctx);
      return response ?? pluginErrorResponse(new PlatformError("not_found", `No route for ${request.method} ${new URL(request.url).pathname}.`), "workspace");
    } catch (error) {
      return pluginErrorResponse(error, "workspace");
    }
  },
} satisfies ExportedHandler<WorkspaceEnv>;
