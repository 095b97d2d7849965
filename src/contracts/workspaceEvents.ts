import { PlatformError } from "../core/errors.ts";

/**
 * The workspace-chat plugin's wire shapes, shared by the plugin worker (which
 * produces events and serves the proxy routes) and the runtime's `workspace`
 * module (which hands events to user code and calls the routes).
 */

/** The event names user code registers with `workspace.onEvent`. */
export const WORKSPACE_EVENT_KINDS = ["message", "mention", "reaction"] as const;
export type WorkspaceEventKind = (typeof WORKSPACE_EVENT_KINDS)[number];

/** The `event` of a workspace dispatch: what a handler receives. */
export interface WorkspaceEvent {
  type: WorkspaceEventKind;
  /** The Slack team the event happened in. */
  teamId: string;
  /** Slack's event id (unique; retries are delivered once). */
  eventId: string;
  channel?: string;
  /** Slack user id of who wrote / reacted. */
  user?: string;
  text?: string;
  /** The message's timestamp (its id within the channel). */
  ts?: string;
  /** Set when the message is inside a thread: the parent's ts. */
  threadTs?: string;
  /** `reaction`: the emoji name and the message reacted to. */
  reaction?: string;
  item?: { channel?: string; ts?: string };
  /** Slack's inner event, unchanged. */
  raw: Record<string, unknown>;
}

/**
 * `POST /proxy/<route>` bodies (each may also carry `resource`, the ref from a
 * dispatched event, to name the workspace):
 *   send-message  { channel, text }            → PostedMessage
 *   thread-reply  { channel, threadTs, text }  → PostedMessage & { threadTs }
 *   edit-message  { channel, ts, text }        → PostedMessage
 *   add-reaction  { channel, ts, name }        → { ok: true }
 */
export const WORKSPACE_PROXY_ROUTES = ["send-message", "thread-reply", "edit-message", "add-reaction"] as const;
export type WorkspaceProxyRoute = (typeof WORKSPACE_PROXY_ROUTES)[number];

export interface PostedMessage {
  channel: string;
  ts: string;
}

/** A channel id such as C0123456789. */
export const WORKSPACE_CHANNEL_ID = /^[CDGZ][A-Z0-9]{2,30}$/;
/** A message timestamp such as 1712345678.000100. */
export const WORKSPACE_MESSAGE_TS = /^\d{1,12}\.\d{1,9}$/;
/** The provider's limit on a message's text. */
export const MAX_WORKSPACE_TEXT_CHARS = 40_000;

/** A message's text, checked by the runtime before the call and by the plugin on arrival. */
export function requireWorkspaceText(text: unknown): string {
  if (typeof text !== "string" || text.trim() === "")
    throw new PlatformError("invalid_input", "text must be a non-empty string.");
  if (text.length > MAX_WORKSPACE_TEXT_CHARS)
    throw new PlatformError("invalid_input", "text must be at most 40,000 characters (Slack's limit).");
  return text;
}
