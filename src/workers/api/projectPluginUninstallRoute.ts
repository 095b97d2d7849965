import { PlatformError } from "../../core/errors.ts";
import { IDENTITY_HEADER, signRequestToken } from "../../core/requestToken.ts";
import type { ApiEnv } from "./env.ts";
import { PLUGIN_BINDINGS } from "./pluginRegistration.ts";
import { requireOwnedProject } from "./projectRoutes.ts";
import type { CliRequest } from "./withCliUser.ts";

const UNINSTALLABLE = ["chatserver", "workspace"] as const;
type UninstallablePlugin = (typeof UNINSTALLABLE)[number];

/**
 * `DELETE /projects/:slug/plugins/:plugin` (CLI token, project ownership):
 * `platform plugin uninstall`. Calls the plugin worker's `POST /uninstall` as
 * the project itself would (an identity token signed by its worker secret,
 * as after a deploy), which revokes the token at the provider where it can,
 * removes the bot's commands, deletes the connection and releases every
 * claimed resource; answers the plugin's report of what it did.
 */
export async function uninstallProjectPlugin(request: CliRequest, env: ApiEnv): Promise<Response> {
  const project = await requireOwnedProject(env.DB, request.user, request.params.slug!);
  const plugin = request.params.plugin as UninstallablePlugin;
  if (!UNINSTALLABLE.includes(plugin)) {
    throw new PlatformError(
      "not_found",
      `Only chatserver and workspace can be uninstalled (got ${JSON.stringify(request.params.plugin)}).`,
    );
  }
  const binding = PLUGIN_BINDINGS[plugin];
  const worker = env[binding];
  if (!worker)
    throw new PlatformError("not_ready", `The ${plugin} plugin is not bound to the API worker (${binding}).`);
  const body = "{}";
  const token = await signRequestToken("identity", project.id, project.worker_secret, {
    method: "POST",
    pathAndQuery: "/uninstall",
    body,
  });
  let response: Response;
  try {
    response = await worker.fetch("https://plugin.internal/uninstall", {
      method: "POST",
      headers: { "content-type": "application/json", [IDENTITY_HEADER]: token },
      body,
    });
  } catch (error) {
    throw new PlatformError("upstream_error", `The ${plugin} plugin could not be reached: ${String(error)}.`);
  }
  // The plugin's answer (its report, or its PlatformError body) passes through with its status.
  return new Response(response.body, {
    status: response.status,
    headers: {
      "content-type": response.headers.get("content-type") ?? "application/json",
      "Cache-Control": "no-store",
    },
  });
}
