/**
 * The chat server's part of the shared install flow (kit/oauthInstall.ts):
 * consent asks for `bot applications.commands`; the code is exchanged with
 * client_secret_basic; the server the token answer names (`guild`,
 * authoritative; the callback's guild_id is only a hint) is claimed as
 * resource type `server`. A project may hold several servers.
 */
import { PlatformError } from "../../core/errors.ts";
import { basicAuthorization } from "../../core/web/basicAuthorization.ts";
import { chatServerPlugin } from "../../contracts/plugins/chatserver.ts";
import { oauthInstall, rotationOf, type InstallGrant } from "../kit/oauthInstall.ts";
import { readDeployedManifest } from "../../workers/db/deployedManifests.ts";
import type { ProjectRow } from "../../workers/db/projectsTable.ts";
import { findResourceOwner } from "../../workers/db/resourceClaims.ts";
import { providerFetch, USER_AGENT } from "./chatServerApi.ts";
import { parseCommands, registerServerCommands } from "./deploy.ts";
import { PLUGIN_ID, RESOURCE_TYPE, type ChatServerEnv } from "./env.ts";

/** SEND_MESSAGES (1 << 11) | USE_APPLICATION_COMMANDS (1 << 31). */
export const DEFAULT_BOT_PERMISSIONS = String((1n << 11n) | (1n << 31n));

interface TokenAnswer {
  access_token?: unknown;
  refresh_token?: unknown;
  expires_in?: unknown;
  error?: unknown;
  guild?: { id?: unknown; name?: unknown };
}

const origin = (env: ChatServerEnv) => env.CHATSERVER_BASE_URL.replace(/\/+$/, "");

async function exchangeCode(env: ChatServerEnv, code: string, redirectUri: string): Promise<InstallGrant> {
  let response: Response;
  try {
    response = await providerFetch(
      env,
      new Request(origin(env) + "/api/oauth2/token", {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          "user-agent": USER_AGENT,
          authorization: basicAuthorization(env.CHATSERVER_CLIENT_ID, env.CHATSERVER_CLIENT_SECRET ?? ""),
        },
        body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: redirectUri }).toString(),
      }),
    );
  } catch (error) {
    throw new PlatformError("upstream_error", `The chat server could not be reached: ${String(error)}.`);
  }
  const answer = (await response.json().catch(() => ({}))) as TokenAnswer;
  if (!response.ok) {
    const name = typeof answer.error === "string" ? answer.error : response.status;
    throw new PlatformError("upstream_error", `The chat server refused the authorization code (${name}).`);
  }
  const guildId = typeof answer.guild?.id === "string" ? answer.guild.id : null;
  if (!guildId || typeof answer.access_token !== "string") {
    throw new PlatformError(
      "upstream_error",
      "The chat server's answer named no server; install the bot into a server.",
    );
  }
  return {
    externalResourceId: guildId,
    displayName: typeof answer.guild?.name === "string" ? answer.guild.name : guildId,
    accessToken: answer.access_token,
    ...rotationOf(answer),
  };
}

export const chatServerInstall = oauthInstall<ChatServerEnv>({
  plugin: chatServerPlugin,
  providerName: "the chat server",
  resourceLabel: "Chat server",
  settings: {
    clientId: "CHATSERVER_CLIENT_ID",
    clientSecret: "CHATSERVER_CLIENT_SECRET",
    publicUrl: "CHATSERVER_PUBLIC_URL",
  },
  authorizeUrl: (env) => new URL(origin(env) + "/oauth2/authorize"),
  authorizeParams: (env) => ({
    scope: "bot applications.commands",
    permissions: env.CHATSERVER_PERMISSIONS ?? DEFAULT_BOT_PERMISSIONS,
    integration_type: "0",
    response_type: "code",
  }),
  exchangeCode,
  oneResourcePerProject: false,
  connectedMessage: (grant, project) =>
    `${grant.displayName} is now connected to project ${project.slug}: the bot is installed there. You can close this tab.`,
  afterConnect: registerDeployedCommands,
});

/**
 * Registers the project's last deployed commands in the server just installed, so they are there when the page
 * says "connected"; answers the sentence the page ends with (which commands, or why none yet).
 */
async function registerDeployedCommands(env: ChatServerEnv, project: ProjectRow, grant: InstallGrant): Promise<string> {
  const manifest = await readDeployedManifest(env.DB, PLUGIN_ID, project.id);
  if (!manifest) return "The project has not deployed yet: its commands register on its first deploy.";
  const commands = parseCommands(manifest.commands);
  if (!commands.length) return "The project's last deploy declared no commands.";
  const server = await findResourceOwner(env.DB, PLUGIN_ID, RESOURCE_TYPE, grant.externalResourceId);
  if (!server) return "Its commands register on the project's next deploy.";
  try {
    const done = await registerServerCommands(env, project, server.resource, commands);
    return `Commands registered: ${done.commands.map((name) => `/${name}`).join(", ")}.`;
  } catch (error) {
    const why = error instanceof PlatformError ? error.message : String(error);
    return `Its commands could not be registered yet (${why}); they register on the project's next deploy.`;
  }
}
