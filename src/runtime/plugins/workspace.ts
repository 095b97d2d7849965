import { PlatformError } from "../../core/errors.ts";
import type { PlatformEnv } from "../entry/platformEnv.ts";
import type { PluginRoute } from "../../contracts/pluginRegistry.ts";
import { pluginCall, pluginEnv } from "./pluginCall.ts";
import { platformRuntime } from "../entry/platformRuntime.ts";
import { installPluginHandler, registerPluginMetadata } from "./pluginRoutes.ts";
import {
  requireWorkspaceText,
  WORKSPACE_CHANNEL_ID,
  WORKSPACE_EVENT_KINDS,
  WORKSPACE_MESSAGE_TS,
  WORKSPACE_USER_ID,
  type PostedMessage,
  type WorkspaceAction,
  type WorkspaceEvent,
  type WorkspaceEventKind,
  type WorkspaceViewSubmission,
} from "../../contracts/workspaceEvents.ts";
import { requireBlocks, requireView } from "../../contracts/workspaceBlocks.ts";
import { requireHandlerByPrefix } from "./handlerByPrefix.ts";
import { approverRefusal } from "./approvers.ts";

/**
 * The workspace-chat plugin in user code (`import { workspace } from "platform"`).
 * Evaluated only when a project imports `workspace`: it registers the
 * project's `/__plugin/workspace` handler and reports the events the project
 * listens to in its build metadata (`plugins.workspace.events`).
 *
 *   workspace.onEvent("mention", async (event) => {
 *     await workspace.threadReply(event.channel!, event.ts!, `Hi <@${event.user}>!`);
 *   });
 *   await workspace.sendMessage(channel, "Deploy?", { blocks: [{ type: "actions", elements: [
 *     { type: "button", action_id: `approve:${runId}`, text: { type: "plain_text", text: "Approve" } }] }] });
 *   workspace.onAction("approve", async (action) => { ... action.actionId, action.user ... });
 */
export type {
  WorkspaceAction,
  WorkspaceEvent,
  WorkspaceEventKind,
  WorkspaceViewSubmission,
  PostedMessage,
} from "../../contracts/workspaceEvents.ts";

/**
 * @example
 * workspace.onEvent("mention", async (event, context: WorkspaceEventContext) => console.log(context.project.slug));
 */
export interface WorkspaceEventContext {
  project: { slug: string };
  user?: { id: string; name?: string };
  /** Opaque reference to the workspace; pass it back in options to act in the same workspace. */
  resource: string;
  env: PlatformEnv;
  ctx: ExecutionContext;
}

export type WorkspaceEventHandler = (
  event: WorkspaceEvent,
  context: WorkspaceEventContext,
) => unknown | Promise<unknown>;

/**
 * @example
 * const approve: WorkspaceActionHandler = async (action) => { await workflow.send(action.value!, "approval", {}); };
 * workspace.onAction("approve", approve);
 */
export type WorkspaceActionHandler = (
  action: WorkspaceAction,
  context: WorkspaceEventContext,
) => unknown | Promise<unknown>;

/**
 * @example
 * const onReason: WorkspaceViewHandler = async (submission) => { console.log(submission.values); };
 * workspace.onViewSubmission("reason", onReason);
 */
export type WorkspaceViewHandler = (
  submission: WorkspaceViewSubmission,
  context: WorkspaceEventContext,
) => unknown | Promise<unknown>;

/**
 * @example
 * await workspace.addReaction(channel, ts, "eyes", { idempotencyKey: `seen-${ts}` } satisfies WorkspaceCallOptions);
 */
export interface WorkspaceCallOptions {
  /** The `resource` of a delivered event: act in exactly that workspace (refused if the project no longer owns it). */
  resource?: string;
  /** The project's env (default: the env of the request being handled). */
  env?: PlatformEnv;
}

/**
 * Options of a message: Block Kit `blocks` (≤ 50); `text` stays the notification and fallback.
 * @example
 * const options: WorkspaceMessageOptions = { blocks: [{ type: "section", text: { type: "mrkdwn", text: "*Deploy?*" } }] };
 * await workspace.sendMessage(channel, "Deploy?", options);
 */
export interface WorkspaceMessageOptions extends WorkspaceCallOptions {
  blocks?: Record<string, unknown>[];
}

const handlers = new Map<WorkspaceEventKind, WorkspaceEventHandler[]>();
const actions = new Map<string, WorkspaceActionHandler>();
const views = new Map<string, WorkspaceViewHandler>();

installPluginHandler(platformRuntime, "workspace", async ({ body, env, ctx }) => {
  const delivery = body as {
    kind?: unknown;
    name?: unknown;
    event?: unknown;
    project?: unknown;
    user?: unknown;
    resource?: unknown;
  };
  const kind = delivery?.kind;
  if (
    (kind !== "event" && kind !== "action" && kind !== "view") ||
    typeof delivery.name !== "string" ||
    !delivery.event ||
    typeof delivery.event !== "object"
  ) {
    throw new PlatformError("invalid_input", "Workspace delivery must be an event, action or view with a name.");
  }
  const context: WorkspaceEventContext = {
    project: (delivery.project as { slug: string }) ?? { slug: "" },
    user: delivery.user as WorkspaceEventContext["user"],
    resource: String(delivery.resource ?? ""),
    env,
    ctx,
  };
  if (kind === "action") {
    const handler = requireHandlerByPrefix(actions, delivery.name, "onAction");
    await handler(delivery.event as WorkspaceAction, context);
    return { ok: true };
  }
  if (kind === "view") {
    const handler = requireHandlerByPrefix(views, delivery.name, "onViewSubmission");
    await handler(delivery.event as WorkspaceViewSubmission, context);
    return { ok: true };
  }
  const list = handlers.get(delivery.name as WorkspaceEventKind) ?? [];
  for (const handler of list) await handler(delivery.event as WorkspaceEvent, context);
  return { handled: list.length };
});

/** An action_id or callback_id a handler is registered under: 1–255 characters. */
function registerInteraction<H>(map: Map<string, H>, call: string, id: unknown, handler: H): void {
  if (typeof id !== "string" || id.length < 1 || id.length > 255)
    throw new PlatformError("invalid_input", `workspace.${call}: the id must be 1–255 characters.`);
  if (typeof handler !== "function")
    throw new PlatformError("invalid_input", `workspace.${call}: the handler must be a function.`);
  map.set(id, handler);
}

registerPluginMetadata("workspace", () => ({ events: [...handlers.keys()] }));
platformRuntime.onForget(() => {
  for (const registry of [handlers, actions, views]) registry.clear();
});

function requireChannel(channel: unknown): string {
  if (typeof channel !== "string" || !WORKSPACE_CHANNEL_ID.test(channel)) {
    throw new PlatformError(
      "invalid_input",
      `channel must be a Slack channel id such as C0123456789 (got ${JSON.stringify(channel)}).`,
    );
  }
  return channel;
}
function requireTs(value: unknown, name: string): string {
  if (typeof value !== "string" || !WORKSPACE_MESSAGE_TS.test(value)) {
    throw new PlatformError(
      "invalid_input",
      `${name} must be a Slack message timestamp such as 1712345678.000100 (got ${JSON.stringify(value)}).`,
    );
  }
  return value;
}
function call<T>(
  path: PluginRoute<"workspace">,
  body: Record<string, unknown>,
  options: WorkspaceCallOptions,
): Promise<T> {
  const payload = options.resource ? { ...body, resource: options.resource } : body;
  return pluginCall(options.env ?? pluginEnv(), "workspace", path, { body: payload });
}

/** A message's text and, when given, its blocks, checked before any call. */
function messageBody(text: string, options: WorkspaceMessageOptions): Record<string, unknown> {
  return {
    text: requireWorkspaceText(text),
    ...(options.blocks !== undefined ? { blocks: requireBlocks(options.blocks, "blocks") } : {}),
  };
}

/**
 * A text call about the message `ts` in `channel`: edit it, or reply in its
 * thread; `key` is what the route calls the message (`ts`, `threadTs`).
 */
function textOnMessage(path: PluginRoute<"workspace">, key: "ts" | "threadTs") {
  return async (
    channel: string,
    ts: string,
    text: string,
    options: WorkspaceMessageOptions = {},
  ): Promise<PostedMessage> =>
    call(path, { channel: requireChannel(channel), [key]: requireTs(ts, key), ...messageBody(text, options) }, options);
}

/**
 * The workspace-chat plugin: events, button clicks and views in the workspace connected to the project
 * (`platform plugin install workspace`), and messages the bot posts.
 * @example
 * workspace.onEvent("mention", (event) => workspace.threadReply(event.channel, event.ts, "Hello!"));
 */
export const workspace = {
  /**
   * Runs `handler` for each `message`, `mention` (the bot was @-mentioned) or `reaction` (reaction added) in the connected workspace.
   * @example
   * workspace.onEvent("mention", async (event) => workspace.threadReply(event.channel, event.ts, "On it!"));
   */
  onEvent(kind: WorkspaceEventKind, handler: WorkspaceEventHandler): void {
    if (!WORKSPACE_EVENT_KINDS.includes(kind)) {
      throw new PlatformError(
        "invalid_input",
        `workspace.onEvent: unknown event ${JSON.stringify(kind)}; use one of ${WORKSPACE_EVENT_KINDS.join(", ")}.`,
      );
    }
    if (typeof handler !== "function")
      throw new PlatformError("invalid_input", "workspace.onEvent: the handler must be a function.");
    const list = handlers.get(kind) ?? [];
    list.push(handler);
    handlers.set(kind, list);
  },

  /**
   * Runs `handler` when a button or select whose `action_id` is `actionId`, or
   * starts with `actionId:`, is clicked or chosen in a message the bot posted
   * (the longest matching id wins).
   * @example
   * workspace.onAction("approve", async (action) => workflow.send(action.value, "approval", { by: action.user.id }));
   */
  onAction(actionId: string, handler: WorkspaceActionHandler): void {
    registerInteraction(actions, "onAction", actionId, handler);
  },

  /**
   * Runs `handler` when a view whose `callback_id` is `callbackId`, or starts with `callbackId:`, is submitted.
   * @example
   * workspace.onViewSubmission("reason", async (submission) => console.log(submission.values));
   */
  onViewSubmission(callbackId: string, handler: WorkspaceViewHandler): void {
    registerInteraction(views, "onViewSubmission", callbackId, handler);
  },

  /**
   * Opens a view (a modal, Slack's `views.open`) for the user who clicked:
   * within 3 seconds of the click, once. `private_metadata` carries what the
   * submission needs back (e.g. a run id).
   * @example
   * await workspace.openView(action, { type: "modal", callback_id: "reason", title: { type: "plain_text", text: "Why?" }, blocks: [] });
   */
  async openView(
    action: WorkspaceAction,
    view: Record<string, unknown>,
    options: WorkspaceCallOptions = {},
  ): Promise<{ viewId: string }> {
    const checked = requireView(view);
    const triggerToken = (action as Partial<WorkspaceAction> | null)?.triggerToken;
    if (typeof triggerToken !== "string" || !triggerToken)
      throw new PlatformError(
        "invalid_input",
        "Pass the action your onAction handler received: workspace.openView(action, view).",
      );
    return call("/proxy/open-view", { triggerToken, view: checked }, options);
  },

  /**
   * Posts `text` (and `blocks`) to a channel; resolves `{ channel, ts }`.
   * @example
   * const { ts } = await workspace.sendMessage("C0123456789", "Deploy finished");
   */
  async sendMessage(channel: string, text: string, options: WorkspaceMessageOptions = {}): Promise<PostedMessage> {
    return call("/proxy/send-message", { channel: requireChannel(channel), ...messageBody(text, options) }, options);
  },

  /**
   * Replaces the text (and `blocks`) of the message `ts` the bot posted.
   * @example
   * await workspace.editMessage("C0123456789", ts, "Deploy finished (2 warnings)");
   */
  editMessage: textOnMessage("/proxy/edit-message", "ts"),

  /**
   * A message in `channel` only `user` sees (Slack's `chat.postEphemeral`), e.g. an answer to a click.
   * @example
   * await workspace.sendEphemeral("C0123456789", "U0123456789", "Only approvers may approve.");
   */
  async sendEphemeral(
    channel: string,
    user: string,
    text: string,
    options: WorkspaceMessageOptions = {},
  ): Promise<{ channel: string; messageTs: string }> {
    if (typeof user !== "string" || !WORKSPACE_USER_ID.test(user))
      throw new PlatformError(
        "invalid_input",
        `user must be a Slack user id such as U0123456789 (got ${JSON.stringify(user)}).`,
      );
    return call(
      "/proxy/send-ephemeral",
      { channel: requireChannel(channel), user, ...messageBody(text, options) },
      options,
    );
  },

  /**
   * The approver check of an approval handler: true, after telling the user
   * privately (in the action's channel), when the user who clicked is not one
   * of `approvers` (user ids, e.g. `runApprovers(run)`); false when they may decide.
   * @example
   * if (await workspace.refuseNonApprover(action, runApprovers(run))) return;
   */
  async refuseNonApprover(
    action: WorkspaceAction,
    approvers: readonly string[],
    options: WorkspaceCallOptions = {},
  ): Promise<boolean> {
    const refusal = approverRefusal(action.user?.id, approvers);
    if (refusal === null) return false;
    // An action outside a channel (none to answer in) is still refused, silently.
    if (action.channel) await workspace.sendEphemeral(action.channel, action.user.id, refusal, options);
    return true;
  },

  /**
   * Adds an emoji reaction (e.g. "thumbsup", colons optional); adding one that is already there succeeds.
   * @example
   * await workspace.addReaction("C0123456789", ts, "white_check_mark");
   */
  async addReaction(channel: string, ts: string, name: string, options: WorkspaceCallOptions = {}): Promise<void> {
    if (typeof name !== "string" || !/^:?[a-z0-9_+'-]{1,100}(::skin-tone-[2-6])?:?$/.test(name)) {
      throw new PlatformError(
        "invalid_input",
        `reaction name must be an emoji name such as thumbsup (got ${JSON.stringify(name)}).`,
      );
    }
    await call("/proxy/add-reaction", { channel: requireChannel(channel), ts: requireTs(ts, "ts"), name }, options);
  },

  /**
   * Replies in the thread of the message `ts` (the parent's); resolves `{ channel, ts }`.
   * @example
   * await workspace.threadReply("C0123456789", ts, "Logs: https://example.com/run/42");
   */
  threadReply: textOnMessage("/proxy/thread-reply", "threadTs"),
};

/** Tests: forget registered handlers. */
export function resetWorkspaceHandlers(): void {
  handlers.clear();
  actions.clear();
  views.clear();
}
