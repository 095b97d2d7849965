/**
 * Install flow (docs/plugins-contract.md, "Install"):
 *   GET /install?code=<session code>  uses the code once, signs an OAuth state
 *       for the project, binds it to this browser with a cookie holding the
 *       state's nonce, redirects to the chat server's consent page asking for
 *       `bot applications.commands`;
 *   GET /oauth/callback?code&state[&guild_id]  checks the state and the cookie, exchanges the
 *       code (client_secret_basic), claims the server the token answer names
 *       (`guild`, authoritative; the query's guild_id is only a hint) as
 *       resource type `server`, then stores the connection. Another project's
 *       server → 409 page and nothing stored.
 */
import { PlatformError } from "../../../core/errors.ts";
import { signOAuthState, verifyOAuthState } from "../shared/oauthState.ts";
import { claimResource } from "../../db/resourceClaims.ts";
import { upsertConnection } from "../../db/connectionsStore.ts";
import { consumeSessionCode, SESSION_CODE_REFUSALS } from "../shared/sessionCodes.ts";
import { providerFetch, USER_AGENT } from "./discordApi.ts";
import { PLUGIN_ID, type ChatServerEnv } from "./env.ts";
import { page } from "./pages.ts";

/** SEND_MESSAGES (1 << 11) | USE_APPLICATION_COMMANDS (1 << 31). */
export const DEFAULT_BOT_PERMISSIONS = String((1n << 11n) | (1n << 31n));

const COOKIE = "platform_chatserver_install";

function cookieValue(request: Request, name: string): string | null {
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return v.join("=");
  }
  return null;
}

const CLEAR_COOKIE = { "set-cookie": `${COOKIE}=; Path=/oauth/callback; Max-Age=0; HttpOnly; SameSite=Lax` };

export function redirectUri(env: ChatServerEnv): string {
  return env.CHATSERVER_PUBLIC_URL.replace(/\/+$/, "") + "/oauth/callback";
}

export async function handleInstall(request: Request, env: ChatServerEnv): Promise<Response> {
  const code = new URL(request.url).searchParams.get("code");
  const used = await consumeSessionCode(env, code, PLUGIN_ID);
  if (!used.ok) {
    const status = used.reason === "unknown" ? 404 : used.reason === "wrong_plugin" ? 400 : 410;
    return page(status, "Install link refused", SESSION_CODE_REFUSALS[used.reason]);
  }
  const { state, claims } = await signOAuthState(env.STATE_SECRET, { projectId: used.projectId, pluginId: PLUGIN_ID });
  const authorize = new URL(env.CHATSERVER_BASE_URL.replace(/\/+$/, "") + "/oauth2/authorize");
  authorize.searchParams.set("client_id", env.CHATSERVER_CLIENT_ID);
  authorize.searchParams.set("scope", "bot applications.commands");
  authorize.searchParams.set("permissions", env.CHATSERVER_PERMISSIONS ?? DEFAULT_BOT_PERMISSIONS);
  authorize.searchParams.set("integration_type", "0");
  authorize.searchParams.set("response_type", "code");
  authorize.searchParams.set("redirect_uri", redirectUri(env));
  authorize.searchParams.set("state", state);
  const secure = new URL(request.url).protocol === "https:" ? "; Secure" : "";
  return new Response(null, {
    status: 302,
    headers: {
      location: authorize.toString(),
      "set-cookie": `${COOKIE}=${claims.nonce}; Path=/oauth/callback; Max-Age=600; HttpOnly; SameSite=Lax${secure}`,
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
    },
  });
}

interface TokenAnswer {
  access_token?: unknown;
  refresh_token?: unknown;
  expires_in?: unknown;
  guild?: { id?: unknown; name?: unknown };
}

export async function handleOAuthCallback(request: Request, env: ChatServerEnv): Promise<Response> {
  const q = new URL(request.url).searchParams;
  const state = await verifyOAuthState(env.STATE_SECRET, q.get("state"), PLUGIN_ID);
  if (!state.ok) {
    const why = state.reason === "expired" ? "The install took longer than 10 minutes." : "The request did not come from an install this plugin started.";
    return page(400, "Install refused", `${why} Run \`platform plugin install chatserver\` again.`);
  }
  if (cookieValue(request, COOKIE) !== state.claims.nonce) {
    return page(400, "Install refused", "This install was started in another browser (or its cookie is gone). Run `platform plugin install chatserver` again.");
  }
  const error = q.get("error");
  if (error) {
    const message = error === "access_denied" ? "You cancelled the authorization; nothing was installed." : `The chat server reported: ${error}.`;
    return page(400, "Install cancelled", message, CLEAR_COOKIE);
  }
  const code = q.get("code");
  if (!code) return page(400, "Install refused", "The chat server sent no authorization code.", CLEAR_COOKIE);
  if (!env.CHATSERVER_CLIENT_SECRET) throw new PlatformError("not_ready", "The chat-server plugin has no CHATSERVER_CLIENT_SECRET configured.");

  let answer: TokenAnswer;
  try {
    const response = await providerFetch(
      env,
      new Request(env.CHATSERVER_BASE_URL.replace(/\/+$/, "") + "/api/oauth2/token", {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          "user-agent": USER_AGENT,
          authorization: "Basic " + btoa(`${encodeURIComponent(env.CHATSERVER_CLIENT_ID)}:${encodeURIComponent(env.CHATSERVER_CLIENT_SECRET)}`),
        },
        body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: redirectUri(env) }).toString(),
      }),
    );
    answer = (await response.json().catch(() => ({}))) as TokenAnswer;
    if (!response.ok) {
      const name = (answer as { error?: unknown }).error;
      return page(502, "Install failed", `The chat server refused the authorization code (${typeof name === "string" ? name : response.status}). Run \`platform plugin install chatserver\` again.`, CLEAR_COOKIE);
    }
  } catch (err) {
    return page(502, "Install failed", `The chat server could not be reached: ${String(err)}`, CLEAR_COOKIE);
  }
  const guildId = typeof answer.guild?.id === "string" ? answer.guild.id : null;
  if (!guildId || typeof answer.access_token !== "string") {
    return page(502, "Install failed", "The chat server's answer named no server; install the bot into a server.", CLEAR_COOKIE);
  }
  const guildName = typeof answer.guild?.name === "string" ? answer.guild.name : guildId;
  try {
    await claimResource(env.DB, {
      pluginId: PLUGIN_ID,
      resourceType: "server",
      projectId: state.claims.projectId,
      externalResourceId: guildId,
      displayName: guildName,
    });
  } catch (err) {
    if (err instanceof PlatformError && err.code === "conflict") {
      return page(409, "Server already connected", `${guildName} is already connected to another project. Uninstall it there first.`, CLEAR_COOKIE);
    }
    throw err;
  }
  await upsertConnection(env.DB, env.TOKEN_ENCRYPTION_KEY, {
    pluginId: PLUGIN_ID,
    projectId: state.claims.projectId,
    externalUserId: guildId,
    accessToken: answer.access_token,
    refreshToken: typeof answer.refresh_token === "string" ? answer.refresh_token : null,
    tokenExpiresAt: typeof answer.expires_in === "number" ? Date.now() + answer.expires_in * 1000 : null,
  });
  return page(200, "Chat server connected", `The bot is installed in ${guildName}. Its commands register on the project's next deploy. You can close this tab.`, CLEAR_COOKIE);
}
