import { INSTALLABLE_PLUGINS, isInstallable, pluginById } from "../../contracts/pluginRegistry.ts";
import { hex } from "../../core/crypto/encoding.ts";
import { PlatformError } from "../../core/errors.ts";
import { readJsonObject } from "../../core/web/jsonBody.ts";
import { orList } from "../../core/wordList.ts";
import { SESSION_CODE_LIFETIME_MS } from "../../objects/SessionCode.ts";
import type { ApiEnv } from "./env.ts";
import { requireOwnedProject } from "./projectRoutes.ts";
import type { CliRequest } from "./withCliUser.ts";

/**
 * `POST /oauth/session` `{ project: slug, plugin }` (CLI token, project
 * ownership; an installable plugin of pluginRegistry.ts) → 201 `{ code,
 * expiresAt, installUrl }`, the link under the URL its `urlVar` holds.
 * The code (32 random bytes, hex) lives in its own `SessionCode` actor for
 * 2 minutes, bound to this project, user and plugin; the plugin consumes it once.
 */
export async function createOAuthSession(request: CliRequest, env: ApiEnv): Promise<Response> {
  const { user } = request;
  const body = await readJsonObject(request, 4 * 1024);
  if (typeof body.project !== "string" || !body.project)
    throw new PlatformError("invalid_input", "project must be the project's slug.");
  const plugin = typeof body.plugin === "string" ? pluginById(body.plugin) : undefined;
  if (!plugin) {
    const choices = orList(INSTALLABLE_PLUGINS.map(({ id }) => JSON.stringify(id)));
    throw new PlatformError("invalid_input", `plugin must be ${choices}.`);
  }
  if (!isInstallable(plugin))
    throw new PlatformError("invalid_input", `The ${plugin.id} plugin needs no install: ${plugin.install.instead}.`);
  const project = await requireOwnedProject(env.DB, user, body.project);
  const { urlVar } = plugin.install;
  const base = env[urlVar];
  if (!base)
    throw new PlatformError(
      "not_ready",
      `The ${plugin.id} plugin is not configured on this platform (${urlVar} is not set).`,
    );
  if (!env.SESSION_CODES)
    throw new PlatformError(
      "not_ready",
      "Plugin installs are unavailable: the API worker has no SESSION_CODES binding.",
    );

  const code = hex(crypto.getRandomValues(new Uint8Array(32)));
  const expiresAt = Date.now() + SESSION_CODE_LIFETIME_MS;
  const created = await env.SESSION_CODES.get(env.SESSION_CODES.idFromName(code)).create({
    code,
    projectId: project.id,
    userId: user.id,
    pluginId: plugin.id,
    expiresAt,
  });
  if (!created) throw new PlatformError("internal", "Could not create an install code; try again.");
  const installUrl = `${base.replace(/\/+$/, "")}/install?code=${code}`;
  return Response.json(
    { code, expiresAt: new Date(expiresAt).toISOString(), installUrl },
    { status: 201, headers: { "Cache-Control": "no-store" } },
  );
}
