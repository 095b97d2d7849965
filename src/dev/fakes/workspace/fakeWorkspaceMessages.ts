/**
 * The fake workspace's messages: chat.postMessage, chat.update, chat.postEphemeral and reactions.add on its
 * channels, the messages its user posts, and what a POST to a click's response_url does to them.
 */
import { messageBlocksRefusal, withGeneratedIds, type BlockRefusal } from "./fakeBlockRules.ts";
import type { ResponseUrlTarget } from "./fakeResponseUrls.ts";
import { FAKE_CHANNELS, FAKE_USER_ID, teamInfo, type TeamInfo } from "./fakeWorkspaceTeam.ts";
import type { ViewedMessage } from "./fakeWorkspaceView.ts";
import { apiJson, jsonParam } from "./fakeWorkspaceWire.ts";

export interface Message extends ViewedMessage {
  reactions: Set<string>;
}

/** The Web API methods on messages. */
export const MESSAGE_METHODS: readonly string[] = [
  "chat.postMessage",
  "chat.update",
  "chat.postEphemeral",
  "reactions.add",
];

/**
 * A message's `text` and `blocks`: `text` is only a fallback once there are blocks or attachments ("not
 * enforced as required when using blocks", chat.postMessage), so `no_text` is for a message with none of them;
 * blocks must keep Block Kit's rules (fakeBlockRules.ts), else `invalid_blocks`; Slack fills in missing ids.
 */
export function messageBody(
  params: Record<string, unknown>,
): { text: string; blocks?: unknown[] } | BlockRefusal | string {
  const text = typeof params.text === "string" ? params.text : "";
  let blocks: unknown;
  let attachments: unknown;
  try {
    blocks = jsonParam(params.blocks);
    attachments = jsonParam(params.attachments);
  } catch {
    return "invalid_blocks_format";
  }
  if (blocks !== undefined) {
    const refusal = messageBlocksRefusal(blocks);
    if (refusal) return refusal;
  }
  const hasBlocks = Array.isArray(blocks) && blocks.length > 0;
  const hasAttachments = Array.isArray(attachments) && attachments.length > 0;
  if (!text && !hasBlocks && !hasAttachments) return "no_text";
  return hasBlocks ? { text, blocks: withGeneratedIds(blocks as unknown[]) } : { text };
}

export function refused(body: ReturnType<typeof messageBody>): body is BlockRefusal | string {
  return typeof body === "string" || "error" in body;
}

/** Slack's `ok: false` answer to a body `messageBody` refused. */
export function refusalBody(refusal: BlockRefusal | string): Record<string, unknown> {
  return typeof refusal === "string"
    ? { ok: false, error: refusal }
    : { ok: false, error: refusal.error, response_metadata: { messages: refusal.messages } };
}

export function createWorkspaceMessages(now: () => number) {
  const messages = new Map<string, Message>();
  let seq = 0;

  /** A message timestamp: the second, then a counter (also an action's `action_ts`). */
  function nextTs(): string {
    seq += 1;
    return `${Math.floor(now() / 1000)}.${String(seq).padStart(6, "0")}`;
  }

  /** A message the bot of `team` posts to `channel` now (`ephemeralTo`: seen by that user only), stored. */
  function storeBotMessage(
    team: TeamInfo,
    channel: string,
    body: { text: string; blocks?: unknown[] },
    extra: { threadTs?: string; ephemeralTo?: string } = {},
  ): Message {
    const ts = nextTs();
    const message: Message = {
      channel,
      ts,
      text: body.text,
      ...(body.blocks ? { blocks: body.blocks } : {}),
      user: team.botUserId,
      teamId: team.id,
      ...extra,
      reactions: new Set(),
    };
    messages.set(`${team.id}/${channel}/${ts}`, message);
    return message;
  }

  /** One of {@link MESSAGE_METHODS} called with a bot token of `team`: Slack's answer. */
  function call(method: string, params: Record<string, unknown>, team: TeamInfo): Record<string, unknown> {
    const channel = typeof params.channel === "string" ? params.channel : "";
    if (!(FAKE_CHANNELS as readonly string[]).includes(channel)) return { ok: false, error: "channel_not_found" };
    const key = (ts: string) => `${team.id}/${channel}/${ts}`;

    if (method === "chat.postEphemeral") {
      const body = messageBody(params);
      if (refused(body)) return refusalBody(body);
      const user = typeof params.user === "string" ? params.user : "";
      if (user !== FAKE_USER_ID) return { ok: false, error: "user_not_in_channel" };
      const { ts } = storeBotMessage(team, channel, body, { ephemeralTo: user });
      return { ok: true, message_ts: ts };
    }
    if (method === "chat.postMessage") {
      const body = messageBody(params);
      if (refused(body)) return refusalBody(body);
      const { text } = body;
      if (text.length > 40_000) return { ok: false, error: "msg_too_long" };
      const threadTs = typeof params.thread_ts === "string" ? params.thread_ts : undefined;
      if (threadTs && !messages.has(key(threadTs))) return { ok: false, error: "thread_not_found" };
      const { ts } = storeBotMessage(team, channel, body, { threadTs });
      return {
        ok: true,
        channel,
        ts,
        message: {
          type: "message",
          user: team.botUserId,
          text,
          ts,
          ...(body.blocks ? { blocks: body.blocks } : {}),
          ...(threadTs ? { thread_ts: threadTs } : {}),
        },
      };
    }
    if (method === "chat.update") {
      const ts = typeof params.ts === "string" ? params.ts : "";
      const message = messages.get(key(ts));
      if (!message || message.ephemeralTo) return { ok: false, error: "message_not_found" };
      if (message.user !== team.botUserId) return { ok: false, error: "cant_update_message" };
      const body = messageBody(params);
      if (refused(body)) return refusalBody(body);
      const { text } = body;
      message.text = text;
      message.edited = true;
      // Blocks not given are kept; an empty array removes them (chat.update).
      if (body.blocks) message.blocks = body.blocks;
      else if (params.blocks !== undefined) delete message.blocks;
      return {
        ok: true,
        channel,
        ts,
        text,
        message: {
          type: "message",
          user: message.user,
          text,
          ts,
          ...(message.blocks ? { blocks: message.blocks } : {}),
        },
      };
    }
    // reactions.add
    const ts = typeof params.timestamp === "string" ? params.timestamp : "";
    const name = typeof params.name === "string" ? params.name : "";
    if (!name || !/^[a-z0-9_+'-]+(::skin-tone-[2-6])?$/.test(name)) return { ok: false, error: "invalid_name" };
    const message = messages.get(key(ts));
    if (!message) return { ok: false, error: "message_not_found" };
    if (message.reactions.has(name)) return { ok: false, error: "already_reacted" };
    message.reactions.add(name);
    return { ok: true };
  }

  /** A message in the fake's store, as if a person had posted it (so reactions and threads can target it). */
  function userMessage(teamId: string, channel: string, text: string): Message {
    const ts = nextTs();
    const message: Message = { channel, ts, text, user: FAKE_USER_ID, teamId, reactions: new Set() };
    messages.set(`${teamId}/${channel}/${ts}`, message);
    return message;
  }

  /**
   * A message POSTed to a click's response_url, for the clicked `target`: sent (ephemeral to the clicker unless
   * `response_type` is in_channel), replacing the clicked message (`replace_original`) or deleting it
   * (`delete_original`).
   */
  function respond(target: ResponseUrlTarget, params: Record<string, unknown>): Response {
    const key = `${target.teamId}/${target.channel}/${target.messageTs}`;
    const original = messages.get(key);
    if (params.delete_original === true) {
      if (!original) return apiJson({ ok: false, error: "message_not_found" }, 404);
      messages.delete(key);
      return apiJson({ ok: true });
    }
    const body = messageBody(params);
    if (refused(body)) return apiJson(refusalBody(body), 400);
    if (params.replace_original === true) {
      if (!original) return apiJson({ ok: false, error: "message_not_found" }, 404);
      original.text = body.text;
      original.edited = true;
      if (body.blocks) original.blocks = body.blocks;
      else delete original.blocks;
      return apiJson({ ok: true });
    }
    storeBotMessage(
      teamInfo(target.teamId),
      target.channel,
      body,
      params.response_type === "in_channel" ? {} : { ephemeralTo: FAKE_USER_ID },
    );
    return apiJson({ ok: true });
  }

  return {
    nextTs,
    call,
    userMessage,
    respond,
    /** Every message, oldest first. */
    all: (): Message[] => [...messages.values()],
    reset(): void {
      messages.clear();
    },
  };
}
