/**
 * The workspace-chat plugin worker (`platform-plugin-workspace`). Routes:
 *   POST /webhook                  the provider's Events API (webhook.ts)
 *   GET  /install?code             start an install (install.ts)
 *   GET  /oauth/callback           finish it
 *   POST /uninstall                the project lets its install go (uninstall.ts; identity token, from the API)
 *   POST /deploy                   record the events a project listens to (deploy.ts)
 *   POST /proxy/{send-message,thread-reply,edit-message,add-reaction}   user code's calls (proxy.ts)
 */
import { WORKSPACE_PROXY_ROUTES } from "../../contracts/workspaceEvents.ts";
import { oauthPluginRouter } from "../kit/oauthPluginRouter.ts";
import { handleDeploy } from "./deploy.ts";
import { PLUGIN_ID, type WorkspaceEnv } from "./env.ts";
import { workspaceInstall } from "./install.ts";
import { handleProxy } from "./proxy.ts";
import { handleWebhook } from "./webhook.ts";
import { handleWorkspaceUninstall } from "./uninstall.ts";

const router = oauthPluginRouter(PLUGIN_ID, {
  webhook: handleWebhook,
  install: workspaceInstall,
  uninstall: handleWorkspaceUninstall,
  deploy: handleDeploy,
  proxyRoutes: WORKSPACE_PROXY_ROUTES,
  proxy: handleProxy,
});

export default {
  fetch: router.fetch,
} satisfies ExportedHandler<WorkspaceEnv>;
