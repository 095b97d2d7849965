/**
 * Proxy routes for user code (identity token, what the body says checked,
 * then the project's `actions` rate limit, then the chat server; calls with
 * the bot token also pass the bot's platform-wide cap, botBudget.ts). A
 * message is `content` and/or `components` (contracts/chatComponents.ts):
 *   POST /proxy/reply | followup | update | show-modal   { replyToken, … }   answers to an interaction
 *                                                        (interactionAnswers.ts)
 *   POST /proxy/send-message  { channelId, content?, components? }   only channels of servers this project claimed
 *   POST /proxy/edit-message  { channelId, messageId, content?, components? }
 * Each answers `{ messageId, channelId }`.
 */
import { PlatformError } from "../../core/errors.ts";
import { parseJsonObject } from "../../core/web/jsonBody.ts";
import {
  requireChatId,
  toChatMessageData,
  type ChatMessageAnswer,
  type ChatMessageData,
  type ChatProxyRoute,
} from "../../contracts/chatServerEvents.ts";
import { clearConnectionError, markConnectionNeedsReconnect } from "../../workers/db/connectionsStore.ts";
import type { ProjectRow } from "../../workers/db/projectsTable.ts";
import { findResourceOwner } from "../../workers/db/resourceClaims.ts";
import { authenticateProjectCall } from "../kit/authenticateProjectCall.ts";
import { takeRateLimit } from "../kit/rateLimit.ts";
import { callBot } from "./botBudget.ts";
import { chatServerNow, PLUGIN_ID, RESOURCE_TYPE, type ChatServerEnv } from "./env.ts";
import { planAnswer } from "./interactionAnswers.ts";
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
 * send-message and edit-message: the proxy's `actions` rate and the project's bot share, the channel check, then the message.
 * A refusal of the bot's token or access marks the project's connection `needs_reconnect`; a success clears it.
 */
async function writeToChannel(
  env: ChatServerEnv,
  project: ProjectRow,
  channelId: string,
  call: { method: "POST" | "PATCH"; path: string; data: ChatMessageData },
): Promise<Response> {
  await takeRateLimit(env, project, ["actions", "chatServerBot"], chatServerNow(env));
  try {
    await checkChannel(env, project, channelId);
    const message = await callBot<Message>(env, call.method, call.path, {
      ...call.data,
      allowed_mentions: NO_MENTIONS,
    });
    await clearConnectionError(env.DB, PLUGIN_ID, project.id);
    return answer(message, channelId);
  } catch (error) {
    if (refusedToken(error)) {
      const providerError = `${String(error.details?.status)} ${String(error.details?.providerError ?? "")}`.trim();
      await markConnectionNeedsReconnect(env.DB, { pluginId: PLUGIN_ID, projectId: project.id }, providerError);
    }
    throw error;
  }
}

export async function handleProxy(route: ChatProxyRoute, request: Request, env: ChatServerEnv): Promise<Response> {
  const { project, body } = await authenticateProjectCall(request, env.DB);
  const input = parseJsonObject(body);
  switch (route) {
    case "reply":
    case "followup":
    case "update":
    case "show-modal": {
      const send = planAnswer(env, route, await openReplyToken(env, project.id, input.replyToken), input);
      await takeRateLimit(env, project, ["actions"], chatServerNow(env));
      return Response.json(await send());
    }
    case "send-message": {
      const channelId = requireChatId(input.channelId, "channelId");
      const data = toChatMessageData(input, { creating: true });
      return writeToChannel(env, project, channelId, { method: "POST", path: `/channels/${channelId}/messages`, data });
    }
    case "edit-message": {
      const channelId = requireChatId(input.channelId, "channelId");
      const messageId = requireChatId(input.messageId, "messageId");
      const data = toChatMessageData(input, { creating: false });
      const path = `/channels/${channelId}/messages/${messageId}`;
      return writeToChannel(env, project, channelId, { method: "PATCH", path, data });
    }
  }
}
