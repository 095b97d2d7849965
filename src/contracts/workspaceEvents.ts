import { PlatformError } from "../core/errors.ts";

/**
 * The workspace-chat plugin's wire shapes, shared by the plugin worker (which
 * produces events and serves the proxy routes) and the runtime's `workspace`
 * module (which hands events to user code and calls the routes).
 */

/** The event names user code registers with `workspace.onEvent`. */
export const WORKSPACE_EVENT_KINDS = ["message", "mention", "reaction"] as const;
/**
 * @example
 * const kinds: WorkspaceEventKind[] = ["message", "mention", "reaction"];
 */
export type WorkspaceEventKind = (typeof WORKSPACE_EVENT_KINDS)[number];

/**
 * The `event` of a workspace delivery: what a handler receives.
 * @example
 * workspace.onEvent("message", async (event: WorkspaceEvent) => console.log(event.channel, event.text));
 */
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
 * The `event` of an `action` delivery: a button clicked or a select chosen in
 * a message the bot posted (Slack's `block_actions`); `name` is its action_id.
 * @example
 * workspace.onAction("approve", async (action: WorkspaceAction) => workflow.send(action.value!, "approval", { by: action.user.id }));
 */
export interface WorkspaceAction {
  type: "action";
  teamId: string;
  actionId: string;
  blockId: string | null;
  /** The element's type: `button`, `static_select`, … */
  elementType: string;
  /** A button's value, or a select's chosen option's value. */
  value: string | null;
  /** Every chosen value (a select's; a button's own value). */
  values: string[];
  user: { id: string; name?: string };
  channel: string | null;
  /** The message the element sits on. */
  messageTs: string | null;
  message: { ts: string; text: string; blocks: unknown[] } | null;
  /** Opens a view for 3 seconds after the click (`workspace.openView(action, view)`); sealed for this project. */
  triggerToken: string;
  /** The action as Slack sent it. */
  raw: Record<string, unknown>;
}

/**
 * The `event` of a `view` delivery: a view the bot opened was submitted (`view_submission`); `name` is its callback_id.
 * @example
 * workspace.onViewSubmission("reason", async (submission: WorkspaceViewSubmission) => console.log(submission.privateMetadata));
 */
export interface WorkspaceViewSubmission {
  type: "view";
  teamId: string;
  callbackId: string;
  viewId: string;
  /** What the view was opened with (`private_metadata`), e.g. a run id. */
  privateMetadata: string;
  /** What was entered, by element action_id. */
  fields: Record<string, string>;
  /** Slack's `view.state.values` (by block_id, then action_id). */
  values: Record<string, unknown>;
  user: { id: string; name?: string };
}

/**
 * `POST /proxy/<route>` bodies (each may also carry `resource`, the ref from a
 * delivered event, to name the workspace; `blocks` as workspaceBlocks.ts checks them):
 *   send-message    { channel, text, blocks? }            → PostedMessage
 *   thread-reply    { channel, threadTs, text, blocks? }  → PostedMessage & { threadTs }
 *   edit-message    { channel, ts, text, blocks? }        → PostedMessage
 *   add-reaction    { channel, ts, name }                 → { ok: true }
 *   send-ephemeral  { channel, user, text, blocks? }      → { channel, messageTs }
 *   open-view       { triggerToken, view }                → { viewId }
 */
export const WORKSPACE_PROXY_ROUTES = [
  "send-message",
  "thread-reply",
  "edit-message",
  "add-reaction",
  "send-ephemeral",
  "open-view",
] as const;
export type WorkspaceProxyRoute = (typeof WORKSPACE_PROXY_ROUTES)[number];

/**
 * @example
 * const posted: PostedMessage = await workspace.sendMessage(channel, "Build started");
 * await workspace.threadReply(posted.channel, posted.ts, "Build finished");
 */
export interface PostedMessage {
  channel: string;
  ts: string;
}

/** A channel id such as C0123456789. */
export const WORKSPACE_CHANNEL_ID = /^[CDGZ][A-Z0-9]{2,30}$/;
/** A user id such as U0123456789. */
export const WORKSPACE_USER_ID = /^[UW][A-Z0-9]{2,30}$/;
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
