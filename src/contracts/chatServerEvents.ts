import { PlatformError } from "../core/errors.ts";

/**
 * The chat-server plugin's wire shapes, shared by the plugin worker (which
 * produces dispatches and serves the proxy routes) and the runtime's
 * `chatserver` module (which hands them to user code and calls the routes).
 */

/** The event kinds user code registers with `chatserver.onEvent`. */
export type ChatEventKind = "message" | "reaction";

export const CHAT_EVENT_KINDS: readonly ChatEventKind[] = ["message", "reaction"];

/** A slash command's name: 1-32 lowercase letters, digits, - or _. */
export const COMMAND_NAME = /^[-_\p{Ll}\p{Lo}\p{N}]{1,32}$/u;

/** A chat-server id (server, channel, message, user): decimal digits. */
export const CHAT_ID = /^\d{1,20}$/;

/** The provider's limit on a message's content. */
export const MAX_CHAT_CONTENT_CHARS = 2000;

/** A message's content, checked by the runtime before the call and by the plugin on arrival. */
export function requireChatContent(value: unknown): string {
  if (typeof value !== "string" || value.length === 0)
    throw new PlatformError("invalid_input", "content must be a non-empty string.");
  if (value.length > MAX_CHAT_CONTENT_CHARS)
    throw new PlatformError("invalid_input", `content must be at most ${MAX_CHAT_CONTENT_CHARS} characters.`);
  return value;
}

/** A chat-server id in field `field`. */
export function requireChatId(value: unknown, field: string): string {
  if (typeof value !== "string" || !CHAT_ID.test(value))
    throw new PlatformError("invalid_input", `${field} must be a chat-server id (digits).`);
  return value;
}

export interface ChatCommandOption {
  name: string;
  type: number;
  value?: unknown;
}

/** The `event` of a `command` dispatch. */
export interface ChatCommandDispatchEvent {
  id: string;
  name: string;
  /** As the chat server sent them. */
  options: unknown[];
  guildId: string;
  channelId: string | null;
  locale: string | null;
}

/** The `event` of an `event` dispatch named `message`. */
export interface ChatMessageDispatchEvent {
  type: "message";
  id: string | null;
  channelId: string | null;
  guildId: string;
  content: string;
  timestamp: string | null;
}

/** The `event` of an `event` dispatch named `reaction`. */
export interface ChatReactionDispatchEvent {
  type: "reaction";
  messageId: string | null;
  channelId: string | null;
  guildId: string;
  emoji: string | null;
  timestamp: string | null;
}

/**
 * `POST /proxy/<route>` bodies; each answers {@link ChatMessageAnswer}:
 *   reply / followup  { replyToken, content }
 *   send-message      { channelId, content }
 *   edit-message      { channelId, messageId, content }
 */
export const CHAT_PROXY_ROUTES = ["reply", "followup", "send-message", "edit-message"] as const;
export type ChatProxyRoute = (typeof CHAT_PROXY_ROUTES)[number];

export interface ChatMessageAnswer {
  messageId: string | null;
  channelId: string | null;
}
