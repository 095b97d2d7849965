/**
 * The workspace provider's part of the shared install flow
 * (kit/oauthInstall.ts): Slack's OAuth v2 consent for the bot scopes; the
 * code exchange's team is claimed as resource type `workspace` with the bot
 * token sealed in its metadata, and the connection keeps the refresh token
 * and expiry when the provider rotates tokens. A project holds one workspace.
 */
import { PlatformError } from "../../core/errors.ts";
import { workspacePlugin } from "../../contracts/plugins/workspace.ts";
import { oauthInstall, rotationOf, type InstallGrant } from "../kit/oauthInstall.ts";
import { sealBotToken } from "./botToken.ts";
import { DEFAULT_SCOPES, type WorkspaceEnv } from "./env.ts";
import { authorizeUrl, requestAccessToken } from "./workspaceApi.ts";

async function exchangeCode(env: WorkspaceEnv, code: string, redirectUri: string): Promise<InstallGrant> {
  const { answer } = await requestAccessToken(env, { code, redirect_uri: redirectUri });
  if (!answer.ok) throw new PlatformError("upstream_error", `Slack refused the code exchange (${answer.error}).`);
  const team = answer.team as { id?: unknown; name?: unknown } | undefined;
  const botToken = answer.access_token;
  if (typeof botToken !== "string" || typeof team?.id !== "string") {
    throw new PlatformError("upstream_error", "Slack's answer carried no bot token or team.");
  }
  return {
    externalResourceId: team.id,
    displayName: typeof team.name === "string" && team.name ? team.name : team.id,
    accessToken: botToken,
    ...rotationOf(answer),
    metadata: {
      botToken: await sealBotToken(env, team.id, botToken),
      botUserId: typeof answer.bot_user_id === "string" ? answer.bot_user_id : undefined,
      appId: typeof answer.app_id === "string" ? answer.app_id : undefined,
    },
  };
}

export const workspaceInstall = oauthInstall<WorkspaceEnv>({
  plugin: workspacePlugin,
  providerName: "Slack",
  resourceLabel: "Workspace",
  settings: { clientId: "SLACK_CLIENT_ID", clientSecret: "SLACK_CLIENT_SECRET", publicUrl: "WORKSPACE_PUBLIC_URL" },
  authorizeUrl,
  authorizeParams: (env) => ({ scope: env.SLACK_SCOPES || DEFAULT_SCOPES }),
  exchangeCode,
  oneResourcePerProject: true,
  connectedMessage: (grant, project) =>
    `${grant.displayName} is now connected to project ${project.slug}. You can close this window and return to the terminal.`,
});
