import { hex } from "../../core/crypto/encoding.ts";
import { PlatformError } from "../../core/errors.ts";
import { readJsonObject } from "../../core/web/jsonBody.ts";
import { SESSION_CODE_LIFETIME_MS } from "../../objects/SessionCode.ts";
import type { ApiEnv } from "./env.ts";
import { requireOwnedProject } from "./projectRoutes.ts";
import type { CliRequest } from "./withCliUser.ts";

const INSTALL_URL_VARS = { chatserver: "CHATSERVER_PLUGIN_URL", workspace: "WORKSPACE_PLUGIN_URL" } as const;

/**
 * `POST /oauth/session` `{ project: slug, plugin: "chatserver" | "workspace" }`
 * (CLI token, project ownership) → 201 `{ code, expiresAt, installUrl }`.
 * The code (32 random bytes, hex) lives in its own `SessionCode` actor for
 * 2 minutes, bound to this project, user and plugin; the plugin consumes it once.
 */
export async function createOAuthSession(request: CliRequest, env: ApiEnv): Promise<Response> {
  const { user } = request;
  const body = await readJsonObject(request, 4 * 1024);
  if (typeof body.project !== "string" || !body.project)
    throw new PlatformError("invalid_input", "project must be the project's slug.");
  const plugin = body.plugin;
  if (plugin === "email-send")
    throw new PlatformError(
      "invalid_input",
      "The email-send plugin needs no install: call email.send() from your project.",
    );
  if (plugin !== "chatserver" && plugin !== "workspace") {
    throw new PlatformError("invalid_input", 'plugin must be "chatserver" or "workspace".');
  }
  const project = await requireOwnedProject(env.DB, user, body.project);
  const base = env[INSTALL_URL_VARS[plugin]];
  if (!base)
    throw new PlatformError(
      "not_ready",
      `The ${plugin} plugin is not configured on this platform (${INSTALL_URL_VARS[plugin]} is not set).`,
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
    pluginId: plugin,
    expiresAt,
  });
  if (!created) throw new PlatformError("internal", "Could not create an install code; try again.");
  const installUrl = `${base.replace(/\/+$/, "")}/install?code=${code}`;
  return Response.json(
    { code, expiresAt: new Date(expiresAt).toISOString(), installUrl },
    { status: 201, headers: { "Cache-Control": "no-store" } },
  );
}
