import { requireCustomId, WIRE } from "../../contracts/chatComponents.ts";
import type {
  ChatCommandDeliveryEvent,
  ChatComponentDeliveryEvent,
  ChatInteractionMessage,
  ChatModalDeliveryEvent,
} from "../../contracts/chatServerEvents.ts";
import type { PluginDelivery, PluginUser, ResourceOwnerRef } from "../../contracts/pluginDelivery.ts";
import type { WorkspaceAction, WorkspaceViewSubmission } from "../../contracts/workspaceEvents.ts";
import { PlatformError } from "../../core/errors.ts";
import { NoPluginHandler } from "../plugins/noPluginHandler.ts";
import { runPluginHandler } from "../plugins/pluginRoutes.ts";
import { slackTs, snowflake, TEST_PROJECT } from "./pluginFakes.ts";
import { PostedMessages } from "./postedMessages.ts";
import { useTestWorkflowBackend } from "./testBackend.ts";
import { createRecording, type PluginCallRecord, type PluginRecording } from "./testRecords.ts";
import type { TestedProject } from "./testRequest.ts";
import { inTestScope, testEnv } from "./testScope.ts";
import { testExecutionContext } from "./testExecutionContext.ts";

/**
 * The plugins whose handlers a test can drive.
 * @example
 * const plugin: TestedPluginId = "chatserver";
 * const chat = testPlugin(project, plugin);
 */
export type TestedPluginId = "chatserver" | "workspace";

/**
 * Who clicked or typed: the provider's user id (digits on the chat server, `U…` in the workspace) and name.
 * @example
 * const ada: TestPluginUser = { id: "U0ADA", name: "Ada" };
 * await testPlugin(project, "workspace").action("approve:run-1", { user: ada });
 */
export type TestPluginUser = PluginUser;

/**
 * What a handler answered, and everything it did through the platform. The
 * answer is the handler's first call of each kind: `reply` answered the user
 * (`chatserver.reply`; in the workspace the first `sendEphemeral`,
 * `threadReply` or `sendMessage`), `update` edited the message the click came
 * from (`chatserver.update`; `workspace.editMessage`), `modal` is what it
 * showed (`chatserver.showModal`'s modal; `workspace.openView`'s view); each
 * is the call's input as the plugin received it, or null.
 * @example
 * const answer: PluginAnswer = await testPlugin(project, "chatserver").command("deploy", { text: "web" });
 * expect(answer.reply?.content).toBe("Deploy web?");
 */
export interface PluginAnswer extends PluginRecording {
  reply: Record<string, unknown> | null;
  update: Record<string, unknown> | null;
  modal: Record<string, unknown> | null;
}

/**
 * A project's plugin handlers, driven as the plugin drives them. Chat server:
 * `command`, `component`, `modalSubmit`; workspace: `action`, `viewSubmission`.
 * @example
 * const chat: TestedPlugin = testPlugin(project, "chatserver");
 * const clicked = await chat.component("approve:run-1");
 * expect(clicked.update?.components).toEqual([]);
 */
export interface TestedPlugin {
  /** `/name text` typed by `user`: the `onCommand(name)` handler gets `args.text` (an option named `text`, as the local fake sends it). */
  command(name: string, options?: { text?: string; user?: TestPluginUser }): Promise<PluginAnswer>;
  /** A click on the button (or a choice of `values` in the select) with this customId, on the newest message showing it. */
  component(customId: string, options?: { values?: string[]; user?: TestPluginUser }): Promise<PluginAnswer>;
  /** The modal with this customId submitted with `fields` (by field customId). */
  modalSubmit(
    customId: string,
    fields: Record<string, string>,
    options?: { user?: TestPluginUser },
  ): Promise<PluginAnswer>;
  /** A click on the element with this action_id (a select's chosen `value`), on the newest message showing it. */
  action(actionId: string, options?: { value?: string; user?: TestPluginUser }): Promise<PluginAnswer>;
  /** The view with this callback_id submitted with `fields` (by element action_id). */
  viewSubmission(
    callbackId: string,
    fields: Record<string, string>,
    options?: { user?: TestPluginUser },
  ): Promise<PluginAnswer>;
}

const DEFAULT_USERS: Record<TestedPluginId, TestPluginUser> = {
  chatserver: { id: "100000000000000001", name: "tester" },
  workspace: { id: "U0TESTUSER", name: "tester" },
};
const CHAT_GUILD = "100000000000000002";
const CHAT_CHANNEL = "100000000000000003";
const WORKSPACE_TEAM = "T0TESTTEAM";
const WORKSPACE_CHANNEL = "C0TESTCHANNEL";
const RESOURCE = "test-resource" as ResourceOwnerRef;

/** The handler kinds a test drives for each plugin. */
const KINDS: Record<TestedPluginId, readonly string[]> = {
  chatserver: ["command", "component", "modalSubmit"],
  workspace: ["action", "viewSubmission"],
};

function requireText(value: unknown, what: string, max: number): string {
  if (typeof value !== "string" || value.length < 1 || value.length > max)
    throw new PlatformError("invalid_input", `testPlugin: ${what} must be 1–${max} characters.`);
  return value;
}

function requireUser(value: unknown, plugin: TestedPluginId): TestPluginUser {
  if (value === undefined) return DEFAULT_USERS[plugin];
  const user = value as Partial<TestPluginUser> | null;
  if (!user || typeof user.id !== "string" || !user.id || (user.name !== undefined && typeof user.name !== "string"))
    throw new PlatformError("invalid_input", "testPlugin: user is { id, name? } with a non-empty string id.");
  return { id: user.id, ...(user.name !== undefined ? { name: user.name } : {}) };
}

function requireFields(value: unknown): Record<string, string> {
  if (!value || typeof value !== "object" || Array.isArray(value))
    throw new PlatformError("invalid_input", "testPlugin: fields is an object of strings by field id.");
  for (const [key, field] of Object.entries(value)) {
    if (typeof field !== "string")
      throw new PlatformError("invalid_input", `testPlugin: fields.${key} must be a string.`);
  }
  return { ...(value as Record<string, string>) };
}

function requireValues(value: unknown): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string"))
    throw new PlatformError("invalid_input", "testPlugin: values is a list of strings.");
  return [...value];
}

/** The input of the first call of one of `actions`, without the token that only addresses it. */
function firstInput(calls: readonly PluginCallRecord[], plugin: TestedPluginId, actions: readonly string[]) {
  const call = calls.find((c) => c.plugin === plugin && actions.includes(c.action));
  if (!call) return null;
  const { replyToken: _token, ...input } = call.input;
  return input;
}

function answerOf(plugin: TestedPluginId, recording: PluginRecording): PluginAnswer {
  const { calls } = recording;
  const recorded = { outbox: recording.outbox, calls, runs: recording.runs };
  if (plugin === "chatserver") {
    const shown = firstInput(calls, plugin, ["show-modal"]);
    return {
      reply: firstInput(calls, plugin, ["reply"]),
      update: firstInput(calls, plugin, ["update"]),
      modal: (shown?.modal as Record<string, unknown> | undefined) ?? null,
      ...recorded,
    };
  }
  const opened = firstInput(calls, plugin, ["open-view"]);
  const reply = calls.find(
    (c) => c.plugin === plugin && ["send-ephemeral", "thread-reply", "send-message"].includes(c.action),
  );
  return {
    reply: reply?.input ?? null,
    update: firstInput(calls, plugin, ["edit-message"]),
    modal: (opened?.view as Record<string, unknown> | undefined) ?? null,
    ...recorded,
  };
}

/** A handler the project did not register: the names it did, so the test's typo is plain. */
function noHandler(error: NoPluginHandler, plugin: TestedPluginId): PlatformError {
  const registered = error.registered.length
    ? `Registered: ${error.registered.map((name) => JSON.stringify(name)).join(", ")}.`
    : `None is registered: import the module that registers the project's ${plugin} handlers (pass its default export).`;
  return new PlatformError("not_found", `${error.message} ${registered}`);
}

let interactionCounter = 0;
function interactionToken(kind: string): string {
  interactionCounter += 1;
  return `test-${kind}-token-${interactionCounter}`;
}

/**
 * Drives a project's `chatserver` or `workspace` handlers in this process,
 * as the plugin worker delivers to them: each call builds the delivery
 * the plugin would send (src/contracts/pluginDelivery.ts, with the event
 * shapes of chatServerEvents.ts and workspaceEvents.ts), runs the handler
 * its module registered through the same runtime route, with the test
 * kit's environment (plugin fakes that record, workflows on the kit's
 * store), and resolves with what the handler answered and the calls it
 * made. A handler that throws rejects the promise with its error; an
 * unknown command or id rejects `not_found` naming the registered ones.
 * @example
 * import project from "../src/index.ts";
 * const chat = testPlugin(project, "chatserver");
 * const asked = await chat.command("deploy", { text: "web" });
 * expect(asked.reply?.content).toBe("Deploy web?");
 * const clicked = await chat.component("approve:run-1", { user: { id: "42", name: "Ada" } });
 * expect(clicked.update).toMatchObject({ components: [] });
 */
export function testPlugin(project: TestedProject, plugin: TestedPluginId): TestedPlugin {
  if (!project || typeof project.fetch !== "function")
    throw new PlatformError(
      "invalid_input",
      "testPlugin takes the project's default export (its module registers the handlers) and a plugin id.",
    );
  if (plugin !== "chatserver" && plugin !== "workspace")
    throw new PlatformError(
      "invalid_input",
      `testPlugin drives "chatserver" or "workspace" handlers (got ${JSON.stringify(plugin)}).`,
    );
  const posted = new PostedMessages();

  function only(kind: string): void {
    if (!KINDS[plugin].includes(kind))
      throw new PlatformError(
        "invalid_input",
        `testPlugin(project, "${plugin}") has no ${kind}: ${plugin} handlers are driven with ${KINDS[plugin].join(", ")}.`,
      );
  }

  async function deliver(
    body: Omit<PluginDelivery, "resource" | "project">,
    from: ChatInteractionMessage | null = null,
  ): Promise<PluginAnswer> {
    useTestWorkflowBackend();
    const payload = JSON.stringify({ ...body, resource: RESOURCE, project: { slug: TEST_PROJECT.slug } });
    const request = new Request(`https://${TEST_PROJECT.slug}.internal/__plugin/${plugin}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: payload,
    });
    const recording = createRecording();
    await inTestScope(recording, async () => {
      const { ctx, settled } = testExecutionContext();
      try {
        // Parsed from JSON, as the project worker reads the plugin's POST: the handler gets no object the test holds.
        await runPluginHandler(plugin, { body: JSON.parse(payload), request, env: testEnv(), ctx });
      } catch (error) {
        throw error instanceof NoPluginHandler ? noHandler(error, plugin) : error;
      } finally {
        await settled();
        const channelId = (body.event as { channelId?: unknown }).channelId;
        posted.record(recording.calls, from, typeof channelId === "string" ? channelId : null);
      }
    });
    return answerOf(plugin, recording);
  }

  return {
    async command(name, options = {}) {
      only("command");
      requireText(name, "the command name", 32);
      const user = requireUser(options.user, plugin);
      const text = options.text === undefined ? undefined : requireText(options.text, "text", 6000);
      const id = snowflake();
      const event: ChatCommandDeliveryEvent = {
        id,
        name,
        options: text === undefined ? [] : [{ name: "text", type: 3, value: text }],
        guildId: CHAT_GUILD,
        channelId: CHAT_CHANNEL,
        locale: null,
      };
      return deliver({ kind: "command", name, event, user, replyToken: interactionToken("reply") });
    },

    async component(customId, options = {}) {
      only("component");
      requireCustomId(customId, "testPlugin: the customId");
      const user = requireUser(options.user, plugin);
      const values = requireValues(options.values);
      const found = posted.chatComponent(customId);
      // Nothing the handlers posted shows it (a step posted it, say): a message with just that component.
      const message: ChatInteractionMessage = found?.message ?? {
        id: snowflake(),
        channelId: CHAT_CHANNEL,
        content: "",
        components: [
          {
            type: WIRE.row,
            components: [
              values.length
                ? { type: WIRE.stringSelect, custom_id: customId, options: values.map((v) => ({ label: v, value: v })) }
                : { type: WIRE.button, custom_id: customId, label: customId, style: 1 },
            ],
          },
        ],
      };
      const isSelect = found ? found.component.type === WIRE.stringSelect : values.length > 0;
      const event: ChatComponentDeliveryEvent = {
        id: snowflake(),
        customId,
        componentType: isSelect ? "select" : "button",
        values: isSelect ? values : [],
        guildId: CHAT_GUILD,
        channelId: message.channelId,
        message,
        locale: null,
      };
      return deliver(
        { kind: "component", name: customId, event, user, replyToken: interactionToken("reply") },
        message,
      );
    },

    async modalSubmit(customId, fields, options = {}) {
      only("modalSubmit");
      requireCustomId(customId, "testPlugin: the customId");
      const user = requireUser(options.user, plugin);
      const message = posted.modalSource(customId);
      const event: ChatModalDeliveryEvent = {
        id: snowflake(),
        customId,
        fields: requireFields(fields),
        guildId: CHAT_GUILD,
        channelId: message?.channelId ?? CHAT_CHANNEL,
        message,
        locale: null,
      };
      return deliver({ kind: "modal", name: customId, event, user, replyToken: interactionToken("reply") }, message);
    },

    async action(actionId, options = {}) {
      only("action");
      requireText(actionId, "the action_id", 255);
      const user = requireUser(options.user, plugin);
      const given = options.value === undefined ? undefined : requireText(options.value, "value", 2000);
      const found = posted.workspaceElement(actionId);
      const element = found?.element ?? { type: "button", action_id: actionId };
      const value = given ?? (typeof element.value === "string" ? element.value : null);
      const message = found?.message ?? null;
      const event: WorkspaceAction = {
        type: "action",
        teamId: WORKSPACE_TEAM,
        actionId,
        blockId: found?.blockId ?? null,
        elementType: typeof element.type === "string" ? element.type : "button",
        value,
        values: value === null ? [] : [value],
        user,
        channel: message?.channel ?? WORKSPACE_CHANNEL,
        messageTs: message?.ts ?? slackTs(),
        message: message ? { ts: message.ts, text: message.text, blocks: message.blocks } : null,
        triggerToken: interactionToken("trigger"),
        raw: { ...element, action_id: actionId, ...(value === null ? {} : { value }) },
      };
      return deliver({ kind: "action", name: actionId, event, user });
    },

    async viewSubmission(callbackId, fields, options = {}) {
      only("viewSubmission");
      requireText(callbackId, "the callback_id", 255);
      const user = requireUser(options.user, plugin);
      const entered = requireFields(fields);
      const event: WorkspaceViewSubmission = {
        type: "view",
        teamId: WORKSPACE_TEAM,
        callbackId,
        viewId: `V${snowflake()}`,
        privateMetadata: posted.viewPrivateMetadata(callbackId),
        fields: entered,
        // Slack's state: one input block per field, named after it.
        values: Object.fromEntries(
          Object.entries(entered).map(([id, value]) => [id, { [id]: { type: "plain_text_input", value } }]),
        ),
        user,
      };
      return deliver({ kind: "view", name: callbackId, event, user });
    },
  };
}
