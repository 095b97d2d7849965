import { createPlatformRouter, type PlatformHandler } from "../../core/web/router.ts";
import type { OAuthInstall } from "./oauthInstall.ts";
import type { PluginEnv } from "./pluginEnv.ts";
import { pluginErrorResponse } from "./pluginErrorResponse.ts";

export interface OAuthPluginRoutes<Env extends PluginEnv, Route extends string> {
  /** `POST /webhook`: what the provider sends. */
  webhook: PlatformHandler<Env>;
  /** `GET /install` and `GET /oauth/callback`. */
  install: OAuthInstall<Env>;
  /** `POST /deploy`: the project's plugin metadata. */
  deploy: PlatformHandler<Env>;
  /** `POST /uninstall`: the project lets its install go (src/plugins/kit/uninstallPlugin.ts). */
  uninstall: PlatformHandler<Env>;
  /** `POST /proxy/<route>`: user code's calls. */
  proxyRoutes: readonly Route[];
  proxy: (route: Route, request: Request, env: Env) => Promise<Response>;
}

/** The router of a plugin worker installed with OAuth (the chat-server and workspace plugins have the same routes). */
export function oauthPluginRouter<Env extends PluginEnv, Route extends string>(
  pluginId: string,
  routes: OAuthPluginRoutes<Env, Route>,
) {
  const router = createPlatformRouter<Env>(`plugin ${pluginId}`, { errorResponse: pluginErrorResponse })
    .post("/webhook", routes.webhook)
    .get("/install", routes.install.begin)
    .get("/oauth/callback", routes.install.complete)
    .post("/deploy", routes.deploy)
    .post("/uninstall", routes.uninstall);
  for (const route of routes.proxyRoutes)
    router.post(`/proxy/${route}`, (request, env) => routes.proxy(route, request, env));
  return router;
}
