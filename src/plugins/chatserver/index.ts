/**
 * The chat-server plugin worker (`platform-plugin-chatserver`). Routes:
 *   POST /webhook                  signed webhooks (webhook.ts)
 *   GET  /install?code             start an install (install.ts)
 *   GET  /oauth/callback           finish it; a completed install starts the Gateway relay
 *   POST /uninstall                the project lets its install go (uninstall.ts; identity token, from the API)
 *   POST /deploy                   register a project's commands (deploy.ts); starts the Gateway relay
 *   POST /gateway/start            starts the Gateway relay (call it after deploying this worker; anyone may:
 *                                  it only starts a relay that is not running); answers each shard's phase and
 *                                  problem (cause and fix), if any
 *   POST /proxy/{reply,followup,send-message,edit-message}   user code's calls (proxy.ts)
 * Exports the `GatewayRelay` actor class (gatewayRelay/GatewayRelay.ts): messages and reactions arrive through it.
 */
import { CHAT_PROXY_ROUTES } from "../../contracts/chatServerEvents.ts";
import { oauthPluginRouter } from "../kit/oauthPluginRouter.ts";
import { handleDeploy } from "./deploy.ts";
import { PLUGIN_ID, type ChatServerEnv } from "./env.ts";
import { startGatewayRelays } from "./gatewayRelay/GatewayRelay.ts";
import { chatServerInstall } from "./install.ts";
import { handleProxy } from "./proxy.ts";
import { handleWebhook } from "./webhook.ts";
import { handleChatServerUninstall } from "./uninstall.ts";

export { GatewayRelay } from "./gatewayRelay/GatewayRelay.ts";

/**
 * Starts the relay once `handler` answered `ok`. A start returns as soon as the connection is under way; a failed
 * start is logged and leaves the answer alone (the next poke, or the relay's own retries, try again).
 */
function thenStartRelay(
  handler: (request: Request, env: ChatServerEnv) => Promise<Response>,
): (request: Request, env: ChatServerEnv) => Promise<Response> {
  return async (request, env) => {
    const response = await handler(request, env);
    if (response.ok) {
      await startGatewayRelays(env).catch((error: unknown) =>
        console.error(`${PLUGIN_ID}: the Gateway relay did not start: ${String(error)}`),
      );
    }
    return response;
  };
}

const router = oauthPluginRouter(PLUGIN_ID, {
  webhook: handleWebhook,
  install: { begin: chatServerInstall.begin, complete: thenStartRelay(chatServerInstall.complete) },
  uninstall: handleChatServerUninstall,
  deploy: thenStartRelay(handleDeploy),
  proxyRoutes: CHAT_PROXY_ROUTES,
  proxy: handleProxy,
}).post("/gateway/start", async (_request, env) =>
  Response.json({
    shards: (await startGatewayRelays(env)).map(({ phase, connected, problem }) => ({
      phase,
      connected,
      problem: problem ?? null,
    })),
  }),
);

export default {
  fetch: router.fetch,
} satisfies ExportedHandler<ChatServerEnv>;
