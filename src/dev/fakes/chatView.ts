/**
 * A fake provider's channels as a person would see them, in one shape for
 * both chat fakes (`GET /__fake/chat?resourceId=<server or workspace id>`):
 * what the console's chat window draws and what a click in it sends back as
 * a test event (`platform plugin trigger … component | modal | action | view`).
 */
export interface ChatView {
  resourceId: string;
  channels: ChatViewChannel[];
  /** Modals (chat server) or views (workspace) open for the fake's user, newest last. */
  forms: ChatViewForm[];
}

export interface ChatViewChannel {
  id: string;
  name: string;
  /** Oldest first; at most the last 50. */
  messages: ChatViewMessage[];
}

export interface ChatViewMessage {
  /** The message id (chat server) or ts (workspace): what a click names as `message`. */
  id: string;
  author: string;
  bot: boolean;
  text: string;
  /** Only the fake's user sees it (an ephemeral answer). */
  ephemeral: boolean;
  /** The bot is still "thinking…" (a deferred answer not replaced yet). */
  pending: boolean;
  edited: boolean;
  /** "Test User used /deploy": the command this message answers. */
  command: string | null;
  /** What the message shows below its text: sections, rows of buttons, a select. */
  rows: ChatViewRow[];
}

export type ChatViewRow =
  | { kind: "text"; text: string }
  | { kind: "buttons"; buttons: ChatViewButton[] }
  | { kind: "select"; select: ChatViewSelect };

export interface ChatViewButton {
  label: string;
  /** primary, secondary, success, danger, link. */
  style: string;
  /** What a click sends (`customId` / `actionId`); null for a link button. */
  id: string | null;
  url: string | null;
  disabled: boolean;
}

export interface ChatViewSelect {
  id: string;
  placeholder: string | null;
  options: { label: string; value: string }[];
  minValues: number;
  maxValues: number;
  disabled: boolean;
}

export interface ChatViewForm {
  /** What a submit sends (`customId` / `callbackId`). */
  id: string;
  title: string;
  submitLabel: string;
  channelId: string | null;
  fields: ChatViewField[];
}

export interface ChatViewField {
  /** The field's key in a submit's `fields`. */
  id: string;
  label: string;
  style: "short" | "paragraph" | "select";
  required: boolean;
  placeholder: string | null;
  value: string | null;
  options?: { label: string; value: string }[];
}

/** Keep the newest `n` (the window shows a channel's recent history). */
export const CHAT_VIEW_MESSAGES = 50;
