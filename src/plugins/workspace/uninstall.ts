/**
 * The workspace provider's part of `POST /uninstall` (src/plugins/kit/uninstallPlugin.ts):
 * Slack's `auth.revoke` with the workspace's bot token, so the token stops
 * working at once (Slack then removes the bot from the workspace).
 */
import { PlatformError } from "../../core/errors.ts";
import { uninstallPlugin } from "../kit/uninstallPlugin.ts";
import { botTokenFor } from "./botToken.ts";
import { PLUGIN_ID, type WorkspaceEnv } from "./env.ts";
import { callWorkspaceMethod } from "./workspaceApi.ts";

/** Slack's answers that mean the token is already dead. */
const ALREADY_DEAD = new Set(["invalid_auth", "token_revoked", "account_inactive", "not_authed"]);

async function revokeBotToken(env: WorkspaceEnv, projectId: number): Promise<string> {
  let token: string;
  try {
    ({ token } = await botTokenFor(env, projectId));
  } catch (error) {
    if (error instanceof PlatformError) return `No bot token to revoke at Slack (${error.code}).`;
    throw error;
  }
  try {
    const { answer } = await callWorkspaceMethod(env, "auth.revoke", token, {});
    if (answer.ok) return "Revoked the bot token at Slack.";
    if (ALREADY_DEAD.has(answer.error)) return `Slack had already revoked the bot token (${answer.error}).`;
    return `Slack did not revoke the bot token (${answer.error}); remove the app in the workspace's settings.`;
  } catch (error) {
    return `Slack could not be reached to revoke the bot token (${error instanceof Error ? error.message : String(error)}).`;
  }
}

export const handleWorkspaceUninstall = uninstallPlugin<WorkspaceEnv>(PLUGIN_ID, async (env, project) => [
  await revokeBotToken(env, project.id),
]);
