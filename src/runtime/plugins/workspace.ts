import { PlatformError } from "../../core/errors.ts";
import type { PlatformEnv } from "../entry/platformEnv.ts";
import type { PluginRoute } from "../../contracts/pluginRegistry.ts";
import { pluginCall, pluginEnv } from "./pluginCall.ts";
import { registerPluginHandler, registerPluginMetadata } from "./pluginRoutes.ts";
import {
  requireWorkspaceText,
  WORKSPACE_CHANNEL_ID,
  WORKSPACE_EVENT_KINDS,
  WORKSPACE_MESSAGE_TS,
  type PostedMessage,
  type WorkspaceEvent,
  type WorkspaceEventKind,
} from "../../contracts/workspaceEvents.ts";

/**
 * The workspace-chat plugin in user code (`import { workspace } from "platform"`).
 * Evaluated only when a project imports `workspace`: it registers the
 * project's `/__plugin/workspace` handler and reports the events the project
 * listens to in its build metadata (`plugins.workspace.events`).
 *
 *   workspace.onEvent("mention", async (event) => {
 *     await workspace.threadReply(event.channel!, event.ts!, `Hi <@${event.user}>!`);
 *   });
 */
export type { WorkspaceEvent, WorkspaceEventKind, PostedMessage } from "../../contracts/workspaceEvents.ts";

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

export interface WorkspaceCallOptions {
  /** The `resource` of a dispatched event: act in exactly that workspace (refused if the project no longer owns it). */
  resource?: string;
  /** The project's env (default: the env of the request being handled). */
  env?: PlatformEnv;
}

const handlers = new Map<WorkspaceEventKind, WorkspaceEventHandler[]>();

registerPluginHandler("workspace", async ({ body, env, ctx }) => {
  const dispatch = body as {
    kind?: unknown;
    name?: unknown;
    event?: unknown;
    project?: unknown;
    user?: unknown;
    resource?: unknown;
  };
  if (
    dispatch?.kind !== "event" ||
    typeof dispatch.name !== "string" ||
    !dispatch.event ||
    typeof dispatch.event !== "object"
  ) {
    throw new PlatformError("invalid_input", "Workspace dispatch must be an event with a name.");
  }
  const list = handlers.get(dispatch.name as WorkspaceEventKind) ?? [];
  const context: WorkspaceEventContext = {
    project: (dispatch.project as { slug: string }) ?? { slug: "" },
    user: dispatch.user as WorkspaceEventContext["user"],
    resource: String(dispatch.resource ?? ""),
    env,
    ctx,
  };
  for (const handler of list) await handler(dispatch.event as WorkspaceEvent, context);
  return { handled: list.length };
});

registerPluginMetadata("workspace", () => ({ events: [...handlers.keys()] }));

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
  return pluginCall(options.env ?? pluginEnv(), "workspace", path, payload);
}

/** A text call about one message: edit it (`ts`) or reply in its thread (`threadTs`). */
function callOnMessage(
  path: PluginRoute<"workspace">,
  channel: string,
  key: "ts" | "threadTs",
  ts: string,
  text: string,
  options: WorkspaceCallOptions,
): Promise<PostedMessage> {
  return call(
    path,
    { channel: requireChannel(channel), [key]: requireTs(ts, key), text: requireWorkspaceText(text) },
    options,
  );
}

export const workspace = {
  /** Runs `handler` for each `message`, `mention` (the bot was @-mentioned) or `reaction` (reaction added) in the connected workspace. */
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

  /** Posts `text` to a channel; resolves `{ channel, ts }`. */
  async sendMessage(channel: string, text: string, options: WorkspaceCallOptions = {}): Promise<PostedMessage> {
    return call("/proxy/send-message", { channel: requireChannel(channel), text: requireWorkspaceText(text) }, options);
  },

  /** Replaces the text of a message the bot posted. */
  async editMessage(
    channel: string,
    ts: string,
    text: string,
    options: WorkspaceCallOptions = {},
  ): Promise<PostedMessage> {
    return callOnMessage("/proxy/edit-message", channel, "ts", ts, text, options);
  },

  /** Adds an emoji reaction (e.g. "thumbsup", colons optional); adding one that is already there succeeds. */
  async addReaction(channel: string, ts: string, name: string, options: WorkspaceCallOptions = {}): Promise<void> {
    if (typeof name !== "string" || !/^:?[a-z0-9_+'-]{1,100}(::skin-tone-[2-6])?:?$/.test(name)) {
      throw new PlatformError(
        "invalid_input",
        `reaction name must be an emoji name such as thumbsup (got ${JSON.stringify(name)}).`,
      );
    }
    await call("/proxy/add-reaction", { channel: requireChannel(channel), ts: requireTs(ts, "ts"), name }, options);
  },

  /** Replies in the thread of the message `threadTs` (the parent's ts); resolves `{ channel, ts }`. */
  async threadReply(
    channel: string,
    threadTs: string,
    text: string,
    options: WorkspaceCallOptions = {},
  ): Promise<PostedMessage> {
    return callOnMessage("/proxy/thread-reply", channel, "threadTs", threadTs, text, options);
  },
};

/** Tests: forget registered handlers. */
export function resetWorkspaceHandlers(): void {
  handlers.clear();
}
