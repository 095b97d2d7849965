import { UNINSTALLABLE_PLUGINS } from "../../contracts/pluginRegistry.ts";
import { PlatformError } from "../../core/errors.ts";
import { IDENTITY_HEADER, signRequestToken } from "../../core/requestToken.ts";
import { andList } from "../../core/wordList.ts";
import type { ApiEnv } from "./env.ts";
import { requireOwnedProject } from "./projectRoutes.ts";
import type { CliRequest } from "./withCliUser.ts";

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
  const descriptor = UNINSTALLABLE_PLUGINS.find(({ id }) => id === request.params.plugin);
  if (!descriptor) {
    const ids = UNINSTALLABLE_PLUGINS.map(({ id }) => id);
    throw new PlatformError(
      "not_found",
      `Only ${andList(ids)} can be uninstalled (got ${JSON.stringify(request.params.plugin)}).`,
    );
  }
  const { id: plugin, binding } = descriptor;
  const worker = env[binding];
  if (!worker)
    throw new PlatformError("not_ready", `The ${plugin} plugin is not bound to the API worker (${binding}).`);
  const body = "{}";
  const token = await signRequestToken(
    "identity",
    { method: "POST", pathAndQuery: "/uninstall", body },
    { projectId: project.id, secret: project.worker_secret },
  );
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
