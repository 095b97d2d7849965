/**
 * The chat-server plugin worker (`platform-plugin-chatserver`). Routes:
 *   POST /webhook                  signed webhooks (webhook.ts)
 *   GET  /install?code             start an install (install.ts)
 *   GET  /oauth/callback           finish it
 *   POST /deploy                   register a project's commands (deploy.ts)
 *   POST /proxy/{reply,followup,send-message,edit-message}   user code's calls (proxy.ts)
 */
import { CHAT_PROXY_ROUTES } from "../../../contracts/chatServerEvents.ts";
import { oauthPluginRouter } from "../shared/oauthPluginRouter.ts";
import { handleDeploy } from "./deploy.ts";
import { PLUGIN_ID, type ChatServerEnv } from "./env.ts";
import { chatServerInstall } from "./install.ts";
import { handleProxy } from "./proxy.ts";
import { handleWebhook } from "./webhook.ts";

const router = oauthPluginRouter(PLUGIN_ID, {
  webhook: handleWebhook,
  install: chatServerInstall,
  deploy: handleDeploy,
  proxyRoutes: CHAT_PROXY_ROUTES,
  proxy: handleProxy,
});

export default {
  fetch: router.fetch,
} satisfies ExportedHandler<ChatServerEnv>;
