/**
 * `chatserver` in the `platform` module: slash commands and events from the
 * chat-server plugin, and the calls that answer them.
 *
 *   chatserver.onCommand("hello", async (cmd) => {
 *     await chatserver.reply(cmd, `Hello ${cmd.user?.name ?? "there"}!`);
 *   }, { description: "Say hello" });
 *   chatserver.onEvent("message", async (ev) => { ... ev.content ... });
 *   await chatserver.sendMessage(channelId, "text");
 *
 * Handlers run when the plugin dispatches to the project's internal
 * `/__plugin/chatserver`; the command and event names a project registers are
 * reported in its metadata (`plugins.chatserver`), which deploy sends to the
 * plugin to register the commands on the project's servers. Calls go through
 * the shared `pluginCall` (identity token; 3 actions / 60 s per project).
 */
import { PlatformError } from "../../core/errors.ts";
import type { PlatformEnv } from "../entry/platformEnv.ts";
import { pluginCall, pluginEnv } from "./pluginCall.ts";
import { NoPluginHandler, registerPluginHandler, registerPluginMetadata } from "./pluginRoutes.ts";
import {
  CHAT_EVENT_KINDS,
  COMMAND_NAME,
  requireChatContent,
  requireChatId,
  type ChatEventKind,
} from "../../contracts/chatServerEvents.ts";
import type { PluginUser } from "../../contracts/pluginDispatch.ts";

export type { ChatEventKind } from "../../contracts/chatServerEvents.ts";
export type ChatUser = PluginUser;

interface Common {
  /** The project, by slug. */
  project: { slug: string };
  /** Opaque name of the server this came from. */
  resource: string;
  user?: ChatUser;
  guildId: string;
  channelId: string | null;
  env: PlatformEnv;
  ctx: ExecutionContext;
}

export interface ChatCommand extends Common {
  name: string;
  /** The command's options as the chat server sent them (`[{ name, type, value }]`). */
  options: { name: string; type: number; value?: unknown }[];
  /** `options` as a name → value map. */
  args: Record<string, unknown>;
  /** Answers this command (15 minutes); pass the whole command to `reply` / `followup`. */
  replyToken: string;
}

export interface ChatEvent extends Common {
  type: ChatEventKind;
  /** Message text (`message`). */
  content?: string;
  messageId?: string | null;
  /** Emoji name (`reaction`). */
  emoji?: string | null;
}

export type CommandHandler = (command: ChatCommand) => unknown | Promise<unknown>;
export type EventHandler = (event: ChatEvent) => unknown | Promise<unknown>;

const commands = new Map<string, { handler: CommandHandler; description: string | undefined }>();
const events = new Map<ChatEventKind, EventHandler[]>();

function replyTokenOf(command: unknown): { token: string; env: PlatformEnv } {
  const c = command as Partial<ChatCommand> | null;
  if (!c || typeof c.replyToken !== "string" || !c.replyToken) {
    throw new PlatformError(
      "invalid_input",
      "Pass the command your onCommand handler received: chatserver.reply(command, content).",
    );
  }
  return { token: c.replyToken, env: c.env ?? pluginEnv() };
}

interface Dispatch {
  kind?: unknown;
  name?: unknown;
  event?: Record<string, unknown>;
  resource?: unknown;
  project?: { slug?: unknown };
  user?: ChatUser;
  replyToken?: unknown;
}

registerPluginHandler("chatserver", async ({ body, env, ctx }) => {
  const d = (body ?? {}) as Dispatch;
  const ev = d.event ?? {};
  const common = {
    project: { slug: String(d.project?.slug ?? "") },
    resource: String(d.resource ?? ""),
    ...(d.user ? { user: d.user } : {}),
    guildId: String(ev.guildId ?? ""),
    channelId: typeof ev.channelId === "string" ? ev.channelId : null,
    env,
    ctx,
  };
  if (d.kind === "command") {
    const name = String(d.name ?? "");
    const entry = commands.get(name);
    if (!entry) throw new NoPluginHandler(`This project has no handler for command /${name}.`);
    const options = Array.isArray(ev.options) ? (ev.options as ChatCommand["options"]) : [];
    await entry.handler({
      ...common,
      name,
      options,
      args: Object.fromEntries(options.map((o) => [o.name, o.value])),
      replyToken: String(d.replyToken ?? ""),
    });
    return { ok: true };
  }
  if (d.kind === "event") {
    const type = d.name as ChatEventKind;
    const handlers = events.get(type) ?? [];
    const event: ChatEvent = {
      ...common,
      type,
      ...(typeof ev.content === "string" ? { content: ev.content } : {}),
      ...("messageId" in ev || "id" in ev ? { messageId: (ev.messageId ?? ev.id ?? null) as string | null } : {}),
      ...("emoji" in ev ? { emoji: (ev.emoji ?? null) as string | null } : {}),
    };
    for (const handler of handlers) await handler(event);
    return { ok: true, handled: handlers.length };
  }
  throw new PlatformError("invalid_input", "Unknown chat-server dispatch.");
});

registerPluginMetadata("chatserver", () => ({
  commands: [...commands].map(([name, { description }]) => ({ name, ...(description ? { description } : {}) })),
  events: [...events.keys()],
}));

export const chatserver = {
  /** Registers a slash command (top level of the project). Names: 1-32 lowercase letters, digits, - or _. */
  onCommand(name: string, handler: CommandHandler, options: { description?: string } = {}): void {
    if (typeof name !== "string" || !COMMAND_NAME.test(name)) {
      throw new PlatformError(
        "invalid_input",
        `chatserver.onCommand: ${JSON.stringify(name)} is not a command name (1-32 lowercase letters, digits, - or _).`,
      );
    }
    if (typeof handler !== "function")
      throw new PlatformError("invalid_input", "chatserver.onCommand needs a handler function.");
    if (
      options.description !== undefined &&
      (typeof options.description !== "string" || options.description.length > 100)
    ) {
      throw new PlatformError(
        "invalid_input",
        "chatserver.onCommand: description is a string of at most 100 characters.",
      );
    }
    commands.set(name, { handler, description: options.description });
  },

  /** Registers a handler for `message` or `reaction` events in the project's servers. */
  onEvent(kind: ChatEventKind, handler: EventHandler): void {
    if (!CHAT_EVENT_KINDS.includes(kind))
      throw new PlatformError(
        "invalid_input",
        `chatserver.onEvent: kind must be one of ${CHAT_EVENT_KINDS.join(", ")}.`,
      );
    if (typeof handler !== "function")
      throw new PlatformError("invalid_input", "chatserver.onEvent needs a handler function.");
    events.set(kind, [...(events.get(kind) ?? []), handler]);
  },

  /** Answers a command (replaces its "thinking…" message). */
  async reply(command: ChatCommand, content: string): Promise<{ messageId: string | null; channelId: string | null }> {
    const text = requireChatContent(content);
    const { token, env } = replyTokenOf(command);
    return pluginCall(env, "chatserver", "/proxy/reply", { replyToken: token, content: text });
  },

  /** Another message in answer to a command. */
  async followup(
    command: ChatCommand,
    content: string,
  ): Promise<{ messageId: string | null; channelId: string | null }> {
    const text = requireChatContent(content);
    const { token, env } = replyTokenOf(command);
    return pluginCall(env, "chatserver", "/proxy/followup", { replyToken: token, content: text });
  },

  /** Posts in a channel of a server connected to this project. */
  async sendMessage(channelId: string, content: string): Promise<{ messageId: string; channelId: string }> {
    const body = { channelId: requireChatId(channelId, "channelId"), content: requireChatContent(content) };
    return pluginCall(pluginEnv(), "chatserver", "/proxy/send-message", body);
  },

  /** Edits a message the bot posted. */
  async editMessage(
    channelId: string,
    messageId: string,
    content: string,
  ): Promise<{ messageId: string; channelId: string }> {
    const body = {
      channelId: requireChatId(channelId, "channelId"),
      messageId: requireChatId(messageId, "messageId"),
      content: requireChatContent(content),
    };
    return pluginCall(pluginEnv(), "chatserver", "/proxy/edit-message", body);
  },
};

/** Tests: forget registered handlers. */
export function resetChatServerHandlers(): void {
  commands.clear();
  events.clear();
}
