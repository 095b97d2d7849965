/**
 * The chat server's part of `POST /uninstall` (src/plugins/kit/uninstallPlugin.ts):
 * the bot's commands are removed from each server the project claimed (one
 * bulk overwrite with [] per server). The bot token is the platform's, shared
 * by every project, so nothing is revoked; the bot leaves when a server
 * admin removes it (the Gateway's GUILD_DELETE then changes nothing more).
 */
import { PlatformError } from "../../core/errors.ts";
import { uninstallPlugin } from "../kit/uninstallPlugin.ts";
import { callBot } from "./botBudget.ts";
import { PLUGIN_ID, RESOURCE_TYPE, type ChatServerEnv } from "./env.ts";

export const handleChatServerUninstall = uninstallPlugin<ChatServerEnv>(PLUGIN_ID, async (env, _project, resources) => {
  const done = ["The chat server's bot token is shared by every project on this platform: nothing to revoke."];
  for (const server of resources) {
    if (server.resource_type !== RESOURCE_TYPE) continue;
    try {
      await callBot(
        env,
        "PUT",
        `/applications/${env.CHATSERVER_APPLICATION_ID}/guilds/${server.external_resource_id}/commands`,
        [],
      );
      done.push(`Removed the bot's commands from ${server.display_name} (${server.external_resource_id}).`);
    } catch (error) {
      const why = error instanceof PlatformError ? error.message : String(error);
      done.push(`Could not remove the commands from ${server.display_name} (${server.external_resource_id}): ${why}`);
    }
  }
  return done;
});
