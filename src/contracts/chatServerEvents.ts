import { PlatformError } from "../core/errors.ts";
import { toWireComponents, type ChatComponents, type WireRow } from "./chatComponents.ts";

/**
 * The chat-server plugin's wire shapes, shared by the plugin worker (which
 * produces deliveries and serves the proxy routes) and the runtime's
 * `chatserver` module (which hands them to user code and calls the routes).
 */

/**
 * The event kinds user code registers with `chatserver.onEvent`.
 * @example
 * const kind: ChatEventKind = "reaction";
 * chatserver.onEvent(kind, async (event) => console.log(event.data));
 */
export type ChatEventKind = "message" | "reaction";

export const CHAT_EVENT_KINDS: readonly ChatEventKind[] = ["message", "reaction"];

/** A slash command's name: 1-32 lowercase letters, digits, - or _. */
export const COMMAND_NAME = /^[-_\p{Ll}\p{Lo}\p{N}]{1,32}$/u;

/** A chat-server id (server, channel, message, user): decimal digits. */
export const CHAT_ID = /^\d{1,20}$/;

/** The provider's limit on a message's content. */
export const MAX_CHAT_CONTENT_CHARS = 2000;

/**
 * What a message says: text, components, or both (`chatserver.reply`, `sendMessage`, `update`, …).
 * @example
 * const message: ChatMessageInput = { content: "Deploy?", components: [{ type: "button", customId: "deploy", label: "Deploy" }] };
 * await chatserver.sendMessage(channelId, message);
 */
export interface ChatMessageInput {
  content?: string;
  components?: ChatComponents;
}

/** A message's content and components as the provider takes them. */
export interface ChatMessageData {
  content?: string;
  components?: WireRow[];
}

/**
 * A message given as a string or `{ content?, components? }`, checked: content
 * at most 2000 characters, components within the provider's limits; a new
 * message (`creating`) needs content or components, an edit at least one of the two fields.
 */
export function toChatMessageData(input: unknown, { creating }: { creating: boolean }): ChatMessageData {
  const message = typeof input === "string" ? { content: input } : input;
  if (!message || typeof message !== "object" || Array.isArray(message))
    throw new PlatformError("invalid_input", "A message is a string or { content, components }.");
  const { content, components } = message as { content?: unknown; components?: unknown };
  const data: ChatMessageData = {};
  if (content !== undefined) {
    if (typeof content !== "string") throw new PlatformError("invalid_input", "content must be a string.");
    if (content.length > MAX_CHAT_CONTENT_CHARS)
      throw new PlatformError("invalid_input", `content must be at most ${MAX_CHAT_CONTENT_CHARS} characters.`);
    data.content = content;
  }
  if (components !== undefined) data.components = toWireComponents(components);
  if (creating ? !data.content && !data.components?.length : data.content === undefined && !data.components)
    throw new PlatformError(
      "invalid_input",
      creating ? "A message needs content (1–2000 characters) or components." : "An edit needs content or components.",
    );
  return data;
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

/** The `event` of a `command` delivery. */
export interface ChatCommandDeliveryEvent {
  id: string;
  name: string;
  /** As the chat server sent them. */
  options: unknown[];
  guildId: string;
  channelId: string | null;
  locale: string | null;
}

/** What a component or modal interaction came from: the message the component sits on. */
export interface ChatInteractionMessage {
  id: string;
  channelId: string | null;
  content: string;
  /** As the chat server sent them (action rows). */
  components: unknown[];
}

/** The `event` of a `component` delivery (a button clicked or a select chosen; `name` is its customId). */
export interface ChatComponentDeliveryEvent {
  id: string;
  customId: string;
  componentType: "button" | "select";
  /** A select's chosen values; empty for a button. */
  values: string[];
  guildId: string;
  channelId: string | null;
  message: ChatInteractionMessage | null;
  locale: string | null;
}

/** The `event` of a `modal` delivery (a modal submitted; `name` is its customId). */
export interface ChatModalDeliveryEvent {
  id: string;
  customId: string;
  /** What was typed, by field customId. */
  fields: Record<string, string>;
  guildId: string;
  channelId: string | null;
  /** The message whose component opened the modal, if a component did. */
  message: ChatInteractionMessage | null;
  locale: string | null;
}

/** The `event` of an `event` delivery named `message`. */
export interface ChatMessageDeliveryEvent {
  type: "message";
  id: string | null;
  channelId: string | null;
  guildId: string;
  content: string;
  timestamp: string | null;
}

/** The `event` of an `event` delivery named `reaction`. */
export interface ChatReactionDeliveryEvent {
  type: "reaction";
  messageId: string | null;
  channelId: string | null;
  guildId: string;
  emoji: string | null;
  timestamp: string | null;
}

/**
 * `POST /proxy/<route>` bodies; each answers {@link ChatMessageAnswer}
 * (`content` 0–2000 characters, `components` as chatComponents.ts takes them):
 *   reply / followup  { replyToken, content?, components?, ephemeral? }
 *   update            { replyToken, content?, components? }      the message a component sits on
 *   show-modal        { replyToken, modal: { customId, title, fields } }
 *   send-message      { channelId, content?, components? }
 *   edit-message      { channelId, messageId, content?, components? }
 */
export const CHAT_PROXY_ROUTES = ["reply", "followup", "update", "show-modal", "send-message", "edit-message"] as const;
export type ChatProxyRoute = (typeof CHAT_PROXY_ROUTES)[number];

export interface ChatMessageAnswer {
  messageId: string | null;
  channelId: string | null;
}
