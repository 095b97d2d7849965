import { PlatformError } from "../../../core/errors.ts";
import {
  ALREADY_CONNECTED_MESSAGE,
  claimResource,
  consumeSessionCode,
  SESSION_CODE_REFUSALS,
  signOAuthState,
  upsertConnection,
  verifyOAuthState,
} from "../shared/index.ts";
import { findProjectById } from "../../db/projectsTable.ts";
import { sealBotToken } from "./botToken.ts";
import { DEFAULT_SCOPES, PLUGIN_ID, RESOURCE_TYPE, type WorkspaceEnv } from "./env.ts";
import { authorizeUrl, oauthV2Access } from "./slackApi.ts";

/**
 * The install flow (docs/plugins-contract.md, "Install"):
 *   GET /install?code=<session code>  consumes the code once, signs an OAuth
 *       state (project, plugin, nonce; 10 minutes), binds the nonce to this
 *       browser with a cookie, and redirects to Slack's consent page;
 *   GET /oauth/callback?code&state     checks the state and the cookie,
 *       exchanges the code, claims the team (resource type `workspace`, bot
 *       token sealed in its metadata) and stores the connection (refresh
 *       token and expiry when Slack rotates tokens).
 * Every outcome is a small HTML page a person can read.
 */
const COOKIE = "platform_workspace_install";

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function page(status: number, title: string, message: string, headers: Record<string, string> = {}): Response {
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></body></html>`;
  return new Response(html, {
    status,
    headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", "referrer-policy": "no-referrer", ...headers },
  });
}

function publicOrigin(env: WorkspaceEnv, request: Request): string {
  return (env.WORKSPACE_PUBLIC_URL || new URL(request.url).origin).replace(/\/+$/, "");
}

export function redirectUri(env: WorkspaceEnv, request: Request): string {
  return `${publicOrigin(env, request)}/oauth/callback`;
}

function cookieValue(request: Request, name: string): string | null {
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return v.join("=");
  }
  return null;
}

export async function handleInstall(request: Request, env: WorkspaceEnv): Promise<Response> {
  if (!env.SLACK_CLIENT_ID || !env.SLACK_CLIENT_SECRET || !env.STATE_SECRET) {
    // Refuse before using the code up: once the platform is configured, the same link still works.
    return page(503, "Install unavailable", "The workspace-chat plugin is not configured on this platform (SLACK_CLIENT_ID, SLACK_CLIENT_SECRET and STATE_SECRET are required).");
  }
  const code = new URL(request.url).searchParams.get("code");
  const consumed = await consumeSessionCode(env, code, PLUGIN_ID);
  if (!consumed.ok) {
    const status = consumed.reason === "unknown" ? 404 : consumed.reason === "wrong_plugin" ? 400 : 410;
    return page(status, "Install link refused", SESSION_CODE_REFUSALS[consumed.reason]);
  }
  const { state, claims } = await signOAuthState(env.STATE_SECRET, { projectId: consumed.projectId, pluginId: PLUGIN_ID });
  const target = authorizeUrl(env);
  target.searchParams.set("client_id", env.SLACK_CLIENT_ID);
  target.searchParams.set("scope", env.SLACK_SCOPES || DEFAULT_SCOPES);
  target.searchParams.set("redirect_uri", redirectUri(env, request));
  target.searchParams.set("state", state);
  const secure = new URL(request.url).protocol === "https:" ? "; Secure" : "";
  return new Response(null, {
    status: 302,
    headers: {
      location: target.toString(),
      "set-cookie": `${COOKIE}=${claims.nonce}; Path=/oauth/callback; Max-Age=600; HttpOnly; SameSite=Lax${secure}`,
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
    },
  });
}

export async function handleCallback(request: Request, env: WorkspaceEnv): Promise<Response> {
  const url = new URL(request.url);
  const clearCookie = { "set-cookie": `${COOKIE}=; Path=/oauth/callback; Max-Age=0; HttpOnly; SameSite=Lax` };
  const checked = await verifyOAuthState(env.STATE_SECRET, url.searchParams.get("state"), PLUGIN_ID);
  if (!checked.ok) {
    const why = checked.reason === "expired" ? "This install took longer than 10 minutes." : "The install state is missing or not valid.";
    return page(400, "Install failed", `${why} Run \`platform plugin install workspace\` again.`);
  }
  if (cookieValue(request, COOKIE) !== checked.claims.nonce) {
    return page(400, "Install failed", "This install was started in another browser (or its cookie is gone). Run `platform plugin install workspace` again.");
  }
  const error = url.searchParams.get("error");
  if (error) {
    const message = error === "access_denied" ? "You cancelled the installation in Slack; nothing was connected." : `Slack refused the installation (${error}); nothing was connected.`;
    return page(400, "Install cancelled", message, clearCookie);
  }
  const code = url.searchParams.get("code");
  if (!code) return page(400, "Install failed", "Slack's callback carried no code.", clearCookie);

  const project = await findProjectById(env.DB, checked.claims.projectId);
  if (!project) return page(404, "Install failed", "The project this install was for no longer exists.", clearCookie);

  const { answer } = await oauthV2Access(env, { code, redirect_uri: redirectUri(env, request) });
  if (!answer.ok) return page(502, "Install failed", `Slack refused the code exchange (${answer.error}). Run \`platform plugin install workspace\` again.`, clearCookie);
  const team = answer.team as { id?: unknown; name?: unknown } | undefined;
  const botToken = answer.access_token;
  if (typeof botToken !== "string" || typeof team?.id !== "string") {
    return page(502, "Install failed", "Slack's answer carried no bot token or team.", clearCookie);
  }
  const teamName = typeof team.name === "string" && team.name ? team.name : team.id;
  const expiresIn = typeof answer.expires_in === "number" ? answer.expires_in : null;
  const refreshToken = typeof answer.refresh_token === "string" ? answer.refresh_token : null;

  try {
    await claimResource(env.DB, {
      pluginId: PLUGIN_ID,
      resourceType: RESOURCE_TYPE,
      projectId: project.id,
      externalResourceId: team.id,
      displayName: teamName,
      metadata: {
        botToken: await sealBotToken(env, team.id, botToken),
        botUserId: typeof answer.bot_user_id === "string" ? answer.bot_user_id : undefined,
        appId: typeof answer.app_id === "string" ? answer.app_id : undefined,
      },
    });
  } catch (claimError) {
    if (claimError instanceof PlatformError && claimError.code === "conflict") {
      return page(409, "Workspace already connected", `${teamName} (${team.id}): ${ALREADY_CONNECTED_MESSAGE}`, clearCookie);
    }
    throw claimError;
  }
  // One workspace per project: a reinstall into another team gives the old one up.
  await env.DB.prepare("DELETE FROM plugin_resources WHERE plugin_id = ? AND resource_type = ? AND project_id = ? AND external_resource_id <> ?")
    .bind(PLUGIN_ID, RESOURCE_TYPE, project.id, team.id)
    .run();
  await upsertConnection(env.DB, env.TOKEN_ENCRYPTION_KEY, {
    pluginId: PLUGIN_ID,
    projectId: project.id,
    externalUserId: team.id,
    accessToken: botToken,
    refreshToken,
    tokenExpiresAt: expiresIn === null ? null : Date.now() + expiresIn * 1000,
  });
  return page(200, "Workspace connected", `${teamName} is now connected to project ${project.slug}. You can close this window and return to the terminal.`, clearCookie);
}
