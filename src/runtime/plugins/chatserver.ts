/**
 * `chatserver` in the `platform` module: slash commands and events from the
 * chat-server plugin, and the calls that answer them.
 *
 *   chatserver.onCommand("hello", async (cmd) => {
 *     await chatserver.reply(cmd, `Hello ${cmd.user?.name ?? "there"}!`);
 *   }, { description: "Say hello" });
 *   chatserver.onEvent("message", async (ev) => { ... ev.content ... });
 *   await chatserver.sendMessage(channelId, { content: "Deploy?", components: [
 *     { type: "button", customId: `approve:${runId}`, label: "Approve", style: "success" }] });
 *   chatserver.onComponent("approve", async (click) => {
 *     await chatserver.update(click, { content: `Approved by ${click.user?.name}`, components: [] });
 *   });
 *
 * Handlers run when the plugin delivers to the project's internal
 * `/__plugin/chatserver` (a command, an event, a component clicked or chosen,
 * a modal submitted); the command and event names a project registers are
 * reported in its metadata (`plugins.chatserver`), which deploy sends to the
 * plugin to register the commands on the project's servers. Calls go through
 * the shared `pluginCall` (identity token; 3 actions / 60 s per project).
 */
import { PlatformError } from "../../core/errors.ts";
import type { PlatformEnv } from "../entry/platformEnv.ts";
import { pluginCall, pluginEnv } from "./pluginCall.ts";
import { requireHandlerByPrefix } from "./handlerByPrefix.ts";
import { NoPluginHandler } from "./noPluginHandler.ts";
import { approverRefusal } from "./approvers.ts";
import { platformRuntime } from "../entry/platformRuntime.ts";
import { installPluginHandler, registerPluginMetadata } from "./pluginRoutes.ts";
import {
  CHAT_EVENT_KINDS,
  COMMAND_NAME,
  requireChatId,
  toChatMessageData,
  type ChatEventKind,
  type ChatInteractionMessage,
  type ChatMessageAnswer,
  type ChatMessageInput,
} from "../../contracts/chatServerEvents.ts";
import {
  fromWireComponents,
  requireCustomId,
  toWireModal,
  type ChatComponent,
  type ChatModal,
} from "../../contracts/chatComponents.ts";
import type { PluginUser } from "../../contracts/pluginDelivery.ts";

export type { ChatEventKind, ChatMessageInput } from "../../contracts/chatServerEvents.ts";
export type {
  ChatButton,
  ChatComponent,
  ChatComponents,
  ChatModal,
  ChatModalField,
  ChatSelect,
  ChatSelectOption,
} from "../../contracts/chatComponents.ts";
/**
 * @example
 * chatserver.onCommand("whoami", async (cmd) => { const user: ChatUser = cmd.user; await chatserver.reply(cmd, user.username); });
 */
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

/** Where a message the bot posted or edited is. */
type PostedMessage = { messageId: string; channelId: string };

/**
 * What a reply, a followup or a message says: text, or text and components; `ephemeral` answers only the user.
 * @example
 * const reply: ChatReply = { content: "Only you see this", ephemeral: true };
 * await chatserver.reply(cmd, reply);
 */
export type ChatReply = string | (ChatMessageInput & { ephemeral?: boolean });

/**
 * @example
 * chatserver.onCommand("deploy", async (cmd: ChatCommand) => chatserver.reply(cmd, `Deploying for ${cmd.user.username}`));
 */
export interface ChatCommand extends Common {
  name: string;
  /** The command's options as the chat server sent them (`[{ name, type, value }]`). */
  options: { name: string; type: number; value?: unknown }[];
  /** `options` as a name → value map. */
  args: Record<string, unknown>;
  /** Answers this command (15 minutes); pass the whole command to `reply` / `followup` / `showModal`. */
  replyToken: string;
}

/**
 * The message a component sits on, as the chat server sent it.
 * @example
 * chatserver.onComponent("approve", async (click) => { const message: ChatComponentMessage = click.message; console.log(message.id); });
 */
export interface ChatComponentMessage {
  id: string;
  channelId: string | null;
  content: string;
  /** Its rows of components, in the shape `components` are written in. */
  components: ChatComponent[][];
}

/**
 * A button clicked or a select chosen on a message the bot posted (`chatserver.onComponent`).
 * @example
 * chatserver.onComponent("approve", async (click: ChatComponentInteraction) => chatserver.update(click, { content: "Approved", components: [] }));
 */
export interface ChatComponentInteraction extends Common {
  /** The component's customId: the handler's name, or `name:…`. Anyone can craft it: check what it names. */
  customId: string;
  componentType: "button" | "select";
  /** A select's chosen values; empty for a button. */
  values: string[];
  message: ChatComponentMessage;
  /** Answers this interaction (15 minutes); pass the whole interaction to `update` / `reply` / `showModal`. */
  replyToken: string;
}

/**
 * A modal the bot showed, submitted (`chatserver.onModalSubmit`).
 * @example
 * chatserver.onModalSubmit("feedback", async (submit: ChatModalSubmit) => chatserver.reply(submit, `Got: ${submit.fields.text}`));
 */
export interface ChatModalSubmit extends Common {
  customId: string;
  /** What was typed, by field customId. */
  fields: Record<string, string>;
  /** The message whose component opened the modal (then `update` edits it); null when a command did. */
  message: ChatComponentMessage | null;
  replyToken: string;
}

/**
 * @example
 * chatserver.onEvent("message", async (event: ChatEvent) => console.log(event.type, event.data));
 */
export interface ChatEvent extends Common {
  type: ChatEventKind;
  /** Message text (`message`). */
  content?: string;
  messageId?: string | null;
  /** Emoji name (`reaction`). */
  emoji?: string | null;
}

/**
 * Anything a handler received that can be answered.
 * @example
 * async function thank(interaction: ChatInteraction) { await chatserver.reply(interaction, "Thanks!"); }
 */
export type ChatInteraction = ChatCommand | ChatComponentInteraction | ChatModalSubmit;

export type CommandHandler = (command: ChatCommand) => unknown | Promise<unknown>;
export type EventHandler = (event: ChatEvent) => unknown | Promise<unknown>;
export type ComponentHandler = (interaction: ChatComponentInteraction) => unknown | Promise<unknown>;
export type ModalSubmitHandler = (submit: ChatModalSubmit) => unknown | Promise<unknown>;

const commands = new Map<string, { handler: CommandHandler; description: string | undefined }>();
const events = new Map<ChatEventKind, EventHandler[]>();
const components = new Map<string, ComponentHandler>();
const modals = new Map<string, ModalSubmitHandler>();

function replyTokenOf(interaction: unknown, call: string): { token: string; env: PlatformEnv } {
  const c = interaction as Partial<ChatInteraction> | null;
  if (!c || typeof c.replyToken !== "string" || !c.replyToken) {
    throw new PlatformError(
      "invalid_input",
      `Pass the command or interaction your handler received: chatserver.${call}(interaction, …).`,
    );
  }
  return { token: c.replyToken, env: c.env ?? pluginEnv() };
}

function registerInteraction<H>(handlers: Map<string, H>, call: string, name: string, handler: H): void {
  const checked = requireCustomId(name, `chatserver.${call}: the name`);
  if (typeof handler !== "function")
    throw new PlatformError("invalid_input", `chatserver.${call} needs a handler function.`);
  handlers.set(checked, handler);
}

interface Delivery {
  kind?: unknown;
  name?: unknown;
  event?: Record<string, unknown>;
  resource?: unknown;
  project?: { slug?: unknown };
  user?: ChatUser;
  replyToken?: unknown;
}

function messageOf(raw: unknown): ChatComponentMessage | null {
  const m = raw as ChatInteractionMessage | null | undefined;
  if (!m || typeof m.id !== "string") return null;
  return {
    id: m.id,
    channelId: typeof m.channelId === "string" ? m.channelId : null,
    content: typeof m.content === "string" ? m.content : "",
    components: fromWireComponents(m.components),
  };
}

installPluginHandler(platformRuntime, "chatserver", async ({ body, env, ctx }) => {
  const d = (body ?? {}) as Delivery;
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
  const name = String(d.name ?? "");
  const replyToken = String(d.replyToken ?? "");
  if (d.kind === "command") {
    const entry = commands.get(name);
    if (!entry)
      throw new NoPluginHandler(
        `This project has no handler for command /${name}.`,
        [...commands.keys()].map((command) => `/${command}`),
      );
    const options = Array.isArray(ev.options) ? (ev.options as ChatCommand["options"]) : [];
    await entry.handler({
      ...common,
      name,
      options,
      args: Object.fromEntries(options.map((o) => [o.name, o.value])),
      replyToken,
    });
    return { ok: true };
  }
  if (d.kind === "component") {
    const handler = requireHandlerByPrefix(components, name, "onComponent");
    const message = messageOf(ev.message);
    if (!message) throw new PlatformError("invalid_input", "A component delivery needs its message.");
    await handler({
      ...common,
      customId: name,
      componentType: ev.componentType === "select" ? "select" : "button",
      values: Array.isArray(ev.values) ? ev.values.map(String) : [],
      message,
      replyToken,
    });
    return { ok: true };
  }
  if (d.kind === "modal") {
    const handler = requireHandlerByPrefix(modals, name, "onModalSubmit");
    const fields = (ev.fields && typeof ev.fields === "object" ? ev.fields : {}) as Record<string, string>;
    await handler({ ...common, customId: name, fields: { ...fields }, message: messageOf(ev.message), replyToken });
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
  throw new PlatformError("invalid_input", "Unknown chat-server delivery.");
});

registerPluginMetadata("chatserver", () => ({
  commands: [...commands].map(([name, { description }]) => ({ name, ...(description ? { description } : {}) })),
  events: [...events.keys()],
}));
platformRuntime.onForget(resetChatServerHandlers);

/** A message's body (a string is its content), checked here: nothing is sent for a refused one. */
function messageBody(message: string | ChatMessageInput, creating: boolean): ChatMessageInput {
  const input = typeof message === "string" ? { content: message } : message;
  toChatMessageData(input, { creating });
  return { content: input.content, components: input.components };
}

/** A reply's body: its message checked, `ephemeral` kept. */
function replyBody(message: ChatReply): Record<string, unknown> {
  const body = messageBody(message, true);
  const ephemeral = typeof message === "string" ? undefined : (message as { ephemeral?: unknown }).ephemeral;
  if (ephemeral !== undefined && typeof ephemeral !== "boolean")
    throw new PlatformError("invalid_input", "ephemeral must be true or false.");
  return { ...body, ...(ephemeral ? { ephemeral } : {}) };
}

/**
 * The chat-server plugin: slash commands, buttons, selects and modals in the servers connected to
 * the project (`platform plugin install chatserver`), and messages the bot posts.
 * @example
 * chatserver.onCommand("ping", (cmd) => chatserver.reply(cmd, "pong"));
 */
export const chatserver = {
  /**
   * Registers a slash command (top level of the project). Names: 1-32 lowercase letters, digits, - or _.
   * @example
   * chatserver.onCommand("deploy", async (cmd) => {
   *   await chatserver.reply(cmd, { content: "Deploy?", components: [{ type: "button", customId: "approve:42", label: "Approve" }] });
   * }, { description: "Deploy the app" });
   */
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

  /**
   * Registers a handler for `message` or `reaction` events in the project's servers.
   * @example
   * chatserver.onEvent("message", async (event) => console.log(event.type, event.data));
   */
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

  /**
   * Runs `handler` when a button or select whose customId is `name`, or starts
   * with `name:`, is clicked or chosen (the longest matching name wins).
   * @example
   * chatserver.onComponent("approve", async (click) => {
   *   await workflow.send(click.customId.split(":")[1], "approval", { by: click.user.id });
   *   await chatserver.update(click, { content: "Approved", components: [] });
   * });
   */
  onComponent(name: string, handler: ComponentHandler): void {
    registerInteraction(components, "onComponent", name, handler);
  },

  /**
   * Runs `handler` when a modal whose customId is `name`, or starts with `name:`, is submitted.
   * @example
   * chatserver.onModalSubmit("feedback", async (submit) => chatserver.reply(submit, `Thanks: ${submit.fields.text}`));
   */
  onModalSubmit(name: string, handler: ModalSubmitHandler): void {
    registerInteraction(modals, "onModalSubmit", name, handler);
  },

  /**
   * Answers a command, a component or a modal: within the chat server's 3 s,
   * as the interaction's answer; after it, a command's "thinking…" message is
   * replaced (an `ephemeral` reply replaces it with a private message) and a
   * component gets a new message.
   * @example
   * await chatserver.reply(cmd, { content: "Only you see this", ephemeral: true });
   */
  async reply(interaction: ChatInteraction, message: ChatReply): Promise<ChatMessageAnswer> {
    const body = replyBody(message);
    const { token, env } = replyTokenOf(interaction, "reply");
    return pluginCall(env, "chatserver", "/proxy/reply", { body: { replyToken: token, ...body } });
  },

  /**
   * Another message in answer to a command or interaction (`ephemeral`: only the user sees it).
   * @example
   * await chatserver.followup(cmd, "The build finished.");
   */
  async followup(interaction: ChatInteraction, message: ChatReply): Promise<ChatMessageAnswer> {
    const body = replyBody(message);
    const { token, env } = replyTokenOf(interaction, "followup");
    return pluginCall(env, "chatserver", "/proxy/followup", { body: { replyToken: token, ...body } });
  },

  /**
   * Edits the message the clicked component sits on (`components: []` removes its buttons).
   * @example
   * await chatserver.update(click, { content: "Done", components: [] });
   */
  async update(
    interaction: ChatComponentInteraction | ChatModalSubmit,
    message: ChatMessageInput,
  ): Promise<ChatMessageAnswer> {
    const body = messageBody(message, false);
    const { token, env } = replyTokenOf(interaction, "update");
    return pluginCall(env, "chatserver", "/proxy/update", { body: { replyToken: token, ...body } });
  },

  /**
   * Shows a modal (a form) to the user who ran the command or clicked the
   * component. It must be the first answer, within 3 s: call it before any slow work.
   * @example
   * await chatserver.showModal(cmd, {
   *   customId: "feedback", title: "Feedback",
   *   fields: [{ customId: "text", label: "What could be better?", style: "paragraph" }],
   * });
   */
  async showModal(interaction: ChatCommand | ChatComponentInteraction, modal: ChatModal): Promise<void> {
    toWireModal(modal);
    const { token, env } = replyTokenOf(interaction, "showModal");
    await pluginCall(env, "chatserver", "/proxy/show-modal", { body: { replyToken: token, modal } });
  },

  /**
   * The approver check of an approval handler: true, after answering the user
   * privately, when the user who clicked or submitted is not one of
   * `approvers` (user ids, e.g. `runApprovers(run)`); false when they may decide.
   * @example
   * if (await chatserver.refuseNonApprover(click, runApprovers(run))) return;
   */
  async refuseNonApprover(
    interaction: ChatComponentInteraction | ChatModalSubmit,
    approvers: readonly string[],
  ): Promise<boolean> {
    const refusal = approverRefusal(interaction.user?.id, approvers);
    if (refusal === null) return false;
    await chatserver.reply(interaction, { content: refusal, ephemeral: true });
    return true;
  },

  /**
   * Posts in a channel of a server connected to this project: text, or `{ content, components }`.
   * @example
   * const posted = await chatserver.sendMessage(channelId, "Nightly report is ready");
   */
  async sendMessage(channelId: string, message: string | ChatMessageInput): Promise<PostedMessage> {
    const body = messageBody(message, true);
    return pluginCall(pluginEnv(), "chatserver", "/proxy/send-message", {
      body: {
        channelId: requireChatId(channelId, "channelId"),
        ...body,
      },
    });
  },

  /**
   * Edits a message the bot posted: its text, its components, or both.
   * @example
   * await chatserver.editMessage(channelId, posted.id, "Nightly report (updated)");
   */
  async editMessage(channelId: string, messageId: string, message: string | ChatMessageInput): Promise<PostedMessage> {
    const body = messageBody(message, false);
    return pluginCall(pluginEnv(), "chatserver", "/proxy/edit-message", {
      body: {
        channelId: requireChatId(channelId, "channelId"),
        messageId: requireChatId(messageId, "messageId"),
        ...body,
      },
    });
  },
};

/** Tests: forget registered handlers. */
export function resetChatServerHandlers(): void {
  commands.clear();
  events.clear();
  components.clear();
  modals.clear();
}
