/**
 * The chat-server plugin worker (`platform-plugin-chatserver`). Routes:
 *   POST /webhook                  signed webhooks (webhook.ts)
 *   GET  /install?code             start an install (install.ts)
 *   GET  /oauth/callback           finish it
 *   POST /deploy                   register a project's commands (deploy.ts)
 *   POST /proxy/{reply,followup,send-message,edit-message}   user code's calls (proxy.ts)
 */
import { Router } from "itty-router";
import { PlatformError } from "../../../core/errors.ts";
import { pluginErrorResponse } from "../shared/pluginErrorResponse.ts";
import { handleDeploy } from "./deploy.ts";
import { PLUGIN_ID, type ChatServerEnv } from "./env.ts";
import { handleInstall, handleOAuthCallback } from "./install.ts";
import { handleProxy } from "./proxy.ts";
import { handleWebhook } from "./webhook.ts";

type Args = [ChatServerEnv, ExecutionContext];

const router = Router<Request, Args>();
router
  .post("/webhook", (request, env, ctx) => handleWebhook(request, env, ctx))
  .get("/install", (request, env) => handleInstall(request, env))
  .get("/oauth/callback", (request, env) => handleOAuthCallback(request, env))
  .post("/deploy", (request, env) => handleDeploy(request, env))
  .post("/proxy/:route", (request, env) => handleProxy((request as unknown as { params: { route: string } }).params.route, request, env));

export default {
  async fetch(request: Request, env: ChatServerEnv, ctx: ExecutionContext): Promise<Response> {
    try {
      const response = (await router.fetch(request, env, ctx)) as Response | undefined;
      return response ?? pluginErrorResponse(new PlatformError("not_found", "Not found."), PLUGIN_ID);
    } catch (error) {
      return pluginErrorResponse(error, PLUGIN_ID);
    }
  },
};
