/**
 * User code's answers to an interaction (`POST /proxy/reply | followup |
 * update | show-modal`, with the sealed reply token of a command, component or
 * modal), sent the way the chat server takes them at that moment
 * (interactionAck.ts):
 *
 *   | answer    | first answer (in time)       | after it (deferred, or answered before)             |
 *   |-----------|------------------------------|-----------------------------------------------------|
 *   | reply     | callback 4 (a new message)   | command: edits @original ("thinking…" or the reply); |
 *   |           |                              | ephemeral: a private followup, "thinking…" removed;  |
 *   |           |                              | component: a followup                               |
 *   | followup  | deferred callback, followup  | a followup                                          |
 *   | update    | callback 7 (edits its message) | edits @original (the component's message)         |
 *   | showModal | callback 9                   | refused: a modal can only be the first answer       |
 *
 * None of them passes the bot's cap (botBudget.ts): they carry the
 * interaction's own webhook token, which the chat server limits per interaction.
 */
import { PlatformError } from "../../core/errors.ts";
import { toWireModal } from "../../contracts/chatComponents.ts";
import { toChatMessageData, type ChatMessageAnswer } from "../../contracts/chatServerEvents.ts";
import { callChatServer } from "./chatServerApi.ts";
import type { ChatServerEnv } from "./env.ts";
import {
  CALLBACK,
  claimFirstAnswer,
  claimFirstReply,
  deferredAnswer,
  EPHEMERAL,
  hasPlaceholder,
} from "./interactionAck.ts";
import type { ReplyClaims } from "./replyToken.ts";

export type InteractionAnswerRoute = "reply" | "followup" | "update" | "show-modal";

interface Message {
  id: string;
  channel_id: string;
}

/** Messages the bot writes never ping anyone. */
const NO_MENTIONS = { parse: [] as string[] };

/** Unknown interaction / Unknown Message: the deferred answer the webhook just gave has not reached the chat server yet. */
const NOT_YET_ACKNOWLEDGED = new Set([10062, 10008]);
const ORIGINAL_ATTEMPTS = 3;
const ORIGINAL_RETRY_MS = 150;

const answer = (message: Message | null): ChatMessageAnswer => ({
  messageId: message?.id ?? null,
  channelId: message?.channel_id ?? null,
});

function ephemeralOf(input: Record<string, unknown>): boolean {
  if (input.ephemeral !== undefined && typeof input.ephemeral !== "boolean")
    throw new PlatformError("invalid_input", "ephemeral must be true or false.");
  return input.ephemeral === true;
}

const webhook = (env: ChatServerEnv, c: ReplyClaims) => `/webhooks/${env.CHATSERVER_APPLICATION_ID}/${c.token}`;

/** The first answer, through the callback endpoint; answers the message it made, if any. */
async function callback(env: ChatServerEnv, c: ReplyClaims, type: number, data?: unknown): Promise<Message | null> {
  const answered = await callChatServer<{ resource?: { message?: Message } } | null>(env, {
    method: "POST",
    path: `/interactions/${c.interactionId}/${c.token}/callback?with_response=true`,
    body: { type, ...(data === undefined ? {} : { data }) },
    auth: "none",
  });
  return answered?.resource?.message ?? null;
}

/** A call on `@original`, tried again briefly while the webhook's deferred answer is on its way to the chat server. */
async function onOriginal(env: ChatServerEnv, c: ReplyClaims, method: "PATCH" | "DELETE", body?: unknown) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await callChatServer<Message | null>(env, {
        method,
        path: `${webhook(env, c)}/messages/@original`,
        body,
        auth: "none",
      });
    } catch (error) {
      const code = error instanceof PlatformError ? error.details?.providerCode : undefined;
      if (attempt >= ORIGINAL_ATTEMPTS || !NOT_YET_ACKNOWLEDGED.has(code as number)) throw error;
      await new Promise((resolve) => setTimeout(resolve, ORIGINAL_RETRY_MS * attempt));
    }
  }
}

function followupMessage(env: ChatServerEnv, c: ReplyClaims, body: unknown): Promise<Message> {
  return callChatServer<Message>(env, { method: "POST", path: `${webhook(env, c)}?wait=true`, body, auth: "none" });
}

/**
 * Checks what the answer says (content, components, a modal; what the
 * interaction allows) and answers the call that sends it: nothing is sent,
 * and no rate is spent, for a refused answer.
 */
export function planAnswer(
  env: ChatServerEnv,
  route: InteractionAnswerRoute,
  c: ReplyClaims,
  input: Record<string, unknown>,
): () => Promise<ChatMessageAnswer> {
  switch (route) {
    case "reply": {
      const body = message(input);
      return () => reply(env, c, body);
    }
    case "followup": {
      const body = message(input);
      return async () => {
        if (await claimFirstAnswer(env, c.interactionId)) await callback(env, c, deferredAnswer(c.kind, c.messageId));
        return answer(await followupMessage(env, c, body));
      };
    }
    case "update": {
      if (c.messageId === null)
        throw new PlatformError(
          "invalid_input",
          `chatserver.update edits the message a button or select sits on; this ${c.kind === "command" ? "command" : "modal"} came from none: answer it with chatserver.reply.`,
        );
      const body = { ...toChatMessageData(input, { creating: false }), allowed_mentions: NO_MENTIONS };
      return async () =>
        (await claimFirstAnswer(env, c.interactionId))
          ? answer(await callback(env, c, CALLBACK.updateMessage, body))
          : answer(await onOriginal(env, c, "PATCH", body));
    }
    case "show-modal": {
      if (c.kind === "modal")
        throw new PlatformError("invalid_input", "A submitted modal cannot be answered with another modal.");
      const modal = toWireModal(input.modal);
      return async () => {
        if (!(await claimFirstAnswer(env, c.interactionId)))
          throw new PlatformError(
            "conflict",
            "A modal can only be the first answer to an interaction, within 3 seconds: call chatserver.showModal before any slow work, and before reply or update.",
          );
        await callback(env, c, CALLBACK.modal, modal);
        return answer(null);
      };
    }
  }
}

/** A message answer's body: content and components checked, mentions off, the ephemeral flag when asked. */
function message(input: Record<string, unknown>): Record<string, unknown> {
  return {
    ...toChatMessageData(input, { creating: true }),
    allowed_mentions: NO_MENTIONS,
    ...(ephemeralOf(input) ? { flags: EPHEMERAL } : {}),
  };
}

async function reply(env: ChatServerEnv, c: ReplyClaims, body: Record<string, unknown>): Promise<ChatMessageAnswer> {
  if (await claimFirstAnswer(env, c.interactionId)) {
    await claimFirstReply(env, c.interactionId);
    return answer(await callback(env, c, CALLBACK.message, body));
  }
  if (!hasPlaceholder(c.kind, c.messageId)) return answer(await followupMessage(env, c, body));
  const first = await claimFirstReply(env, c.interactionId);
  if (body.flags !== EPHEMERAL) return answer(await onOriginal(env, c, "PATCH", body));
  // "thinking…" is public and cannot turn private: the answer is a private followup, and the placeholder goes.
  const sent = await followupMessage(env, c, body);
  if (first) await onOriginal(env, c, "DELETE").catch(() => {});
  return answer(sent);
}
