/**
 * Proxy routes for user code (identity token, then the project's `actions`
 * rate limit, then the chat server; calls with the bot token also pass the
 * bot's platform-wide cap, botBudget.ts):
 *   POST /proxy/reply         { replyToken, content }   edits the deferred answer (@original)
 *   POST /proxy/followup      { replyToken, content }   a further message on the interaction
 *   POST /proxy/send-message  { channelId, content }    only channels of servers this project claimed
 *   POST /proxy/edit-message  { channelId, messageId, content }
 * Each answers `{ messageId, channelId }`.
 */
import { PlatformError } from "../../core/errors.ts";
import { parseJsonObject } from "../../core/web/jsonBody.ts";
import {
  requireChatContent,
  requireChatId,
  type ChatMessageAnswer,
  type ChatProxyRoute,
} from "../../contracts/chatServerEvents.ts";
import { clearConnectionError, markConnectionNeedsReconnect } from "../../workers/db/connectionsStore.ts";
import type { ProjectRow } from "../../workers/db/projectsTable.ts";
import { findResourceOwner } from "../../workers/db/resourceClaims.ts";
import { authenticateProjectCall } from "../shared/authenticateProjectCall.ts";
import { takeRateLimit } from "../shared/rateLimit.ts";
import { callBot } from "./botBudget.ts";
import { callChatServer } from "./chatServerApi.ts";
import { chatServerNow, PLUGIN_ID, RESOURCE_TYPE, type ChatServerEnv } from "./env.ts";
import { openReplyToken } from "./replyToken.ts";

interface Message {
  id: string;
  channel_id: string;
}

/** Messages the bot writes never ping anyone. */
const NO_MENTIONS = { parse: [] as string[] };

const answer = (m: Message | null, fallbackChannel: string | null) =>
  Response.json({ messageId: m?.id ?? null, channelId: m?.channel_id ?? fallbackChannel } satisfies ChatMessageAnswer);

/** The channel must be in a server this project claimed. */
async function checkChannel(env: ChatServerEnv, project: ProjectRow, channelId: string): Promise<void> {
  const channel = await callBot<{ guild_id?: unknown }>(env, "GET", `/channels/${channelId}`, undefined).catch(
    (error) => {
      if (error instanceof PlatformError && error.code === "upstream_error" && error.details?.status === 404)
        return null;
      throw error;
    },
  );
  const guildId = typeof channel?.guild_id === "string" ? channel.guild_id : null;
  const owner = guildId ? await findResourceOwner(env.DB, PLUGIN_ID, RESOURCE_TYPE, guildId) : null;
  if (!owner || owner.project.id !== project.id) {
    throw new PlatformError("forbidden", `Channel ${channelId} is not in a server connected to this project.`);
  }
}

/** The chat server refused the bot token (401) or the bot's access (403). */
const refusedToken = (error: unknown): error is PlatformError =>
  error instanceof PlatformError &&
  error.code === "upstream_error" &&
  (error.details?.status === 401 || error.details?.status === 403);

/**
 * send-message and edit-message: the spec's rate and the project's bot share, the channel check, then the message.
 * A refusal of the bot's token or access marks the project's connection `needs_reconnect`; a success clears it.
 */
async function writeToChannel(
  env: ChatServerEnv,
  project: ProjectRow,
  channelId: string,
  call: { method: "POST" | "PATCH"; path: string; content: string },
): Promise<Response> {
  await takeRateLimit(env, project, ["actions", "chatServerBot"], chatServerNow(env));
  try {
    await checkChannel(env, project, channelId);
    const message = await callBot<Message>(env, call.method, call.path, {
      content: call.content,
      allowed_mentions: NO_MENTIONS,
    });
    await clearConnectionError(env.DB, PLUGIN_ID, project.id);
    return answer(message, channelId);
  } catch (error) {
    if (refusedToken(error)) {
      const providerError = `${String(error.details?.status)} ${String(error.details?.providerError ?? "")}`.trim();
      await markConnectionNeedsReconnect(env.DB, PLUGIN_ID, project.id, providerError);
    }
    throw error;
  }
}

export async function handleProxy(route: ChatProxyRoute, request: Request, env: ChatServerEnv): Promise<Response> {
  const { project, body } = await authenticateProjectCall(request, env.DB);
  const input = parseJsonObject(body);
  switch (route) {
    case "reply":
    case "followup": {
      const text = requireChatContent(input.content);
      const reply = await openReplyToken(env, project.id, input.replyToken);
      await takeRateLimit(env, project, ["actions"], chatServerNow(env));
      // Not through the bot's cap (botBudget.ts): the interaction's own webhook token, limited per interaction.
      const path =
        route === "reply"
          ? `/webhooks/${env.CHATSERVER_APPLICATION_ID}/${reply.token}/messages/@original`
          : `/webhooks/${env.CHATSERVER_APPLICATION_ID}/${reply.token}?wait=true`;
      const message = await callChatServer<Message>(
        env,
        route === "reply" ? "PATCH" : "POST",
        path,
        { content: text, allowed_mentions: NO_MENTIONS },
        "none",
      );
      return answer(message, null);
    }
    case "send-message": {
      const channelId = requireChatId(input.channelId, "channelId");
      const content = requireChatContent(input.content);
      return writeToChannel(env, project, channelId, {
        method: "POST",
        path: `/channels/${channelId}/messages`,
        content,
      });
    }
    case "edit-message": {
      const channelId = requireChatId(input.channelId, "channelId");
      const messageId = requireChatId(input.messageId, "messageId");
      const content = requireChatContent(input.content);
      const path = `/channels/${channelId}/messages/${messageId}`;
      return writeToChannel(env, project, channelId, { method: "PATCH", path, content });
    }
  }
}
