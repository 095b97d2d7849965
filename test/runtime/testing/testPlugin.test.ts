import { afterEach, describe, expect, it } from "vitest";
import { chatserver, PlatformError, workflow, workspace } from "platform";
import { testPlugin, type PluginAnswer, type TestedPlugin } from "platform/testing";
import { resetChatServerHandlers } from "../../../src/runtime/plugins/chatserver.ts";
import { resetWorkspaceHandlers } from "../../../src/runtime/plugins/workspace.ts";

// The project's default export: testPlugin needs it, its module registers the handlers (here: each test).
const project = { fetch: () => new Response("ok") };

const approveButton = (id: string) => ({ type: "button" as const, customId: `approve:${id}`, label: "Approve" });

/** A view as a user opens one: a reason to type, the run it is about in private_metadata. */
const whyView = (runId: string) => ({
  type: "modal",
  callback_id: "why",
  title: { type: "plain_text", text: "Why?" },
  submit: { type: "plain_text", text: "Send" },
  blocks: [
    {
      type: "input",
      block_id: "reason",
      label: { type: "plain_text", text: "Reason" },
      element: { type: "plain_text_input", action_id: "reason" },
    },
  ],
  private_metadata: runId,
});

afterEach(() => {
  resetChatServerHandlers();
  resetWorkspaceHandlers();
});

interface Kind {
  kind: string;
  plugin: "chatserver" | "workspace";
  /** Registers a handler that answers with what it received, as a user's would. */
  register(): void;
  drive(kit: TestedPlugin): Promise<PluginAnswer>;
  answer: Partial<Record<"reply" | "update" | "modal", unknown>>;
  calls: string[];
}

// Every handler kind: what the handler receives is what the plugin delivers, and its answer comes back.
const KINDS: Kind[] = [
  {
    kind: "command",
    plugin: "chatserver",
    register: () =>
      chatserver.onCommand("deploy", async (cmd) => {
        await chatserver.reply(cmd, {
          content: `${cmd.user?.name} asked to deploy ${String(cmd.args.text)} in ${cmd.channelId}`,
          components: [approveButton("r1")],
        });
      }),
    drive: (kit) => kit.command("deploy", { text: "api", user: { id: "42", name: "Ada" } }),
    answer: {
      reply: {
        content: "Ada asked to deploy api in 100000000000000003",
        components: [approveButton("r1")],
      },
      update: null,
      modal: null,
    },
    calls: ["reply"],
  },
  {
    kind: "component",
    plugin: "chatserver",
    register: () =>
      chatserver.onComponent("approve", async (click) => {
        await chatserver.update(click, {
          content: `${click.customId} by ${click.user?.id} (${click.componentType}, on ${click.message.id ? "a message" : "nothing"})`,
          components: [],
        });
      }),
    drive: (kit) => kit.component("approve:r1", { user: { id: "7" } }),
    answer: { reply: null, update: { content: "approve:r1 by 7 (button, on a message)", components: [] }, modal: null },
    calls: ["update"],
  },
  {
    kind: "component (select)",
    plugin: "chatserver",
    register: () =>
      chatserver.onComponent("size", async (choice) => {
        await chatserver.reply(choice, `${choice.componentType}: ${choice.values.join(",")}`);
      }),
    drive: (kit) => kit.component("size", { values: ["m", "l"] }),
    answer: { reply: { content: "select: m,l" } },
    calls: ["reply"],
  },
  {
    kind: "component showing a modal",
    plugin: "chatserver",
    register: () =>
      chatserver.onComponent("reject", async (click) => {
        await chatserver.showModal(click, {
          customId: "why",
          title: "Why?",
          fields: [{ customId: "reason", label: "Reason" }],
        });
      }),
    drive: (kit) => kit.component("reject"),
    answer: {
      reply: null,
      modal: { customId: "why", title: "Why?", fields: [{ customId: "reason", label: "Reason" }] },
    },
    calls: ["show-modal"],
  },
  {
    kind: "modalSubmit",
    plugin: "chatserver",
    register: () =>
      chatserver.onModalSubmit("why", async (submit) => {
        await chatserver.reply(submit, { content: `because ${submit.fields.reason}`, ephemeral: true });
      }),
    drive: (kit) => kit.modalSubmit("why", { reason: "tests fail" }),
    answer: { reply: { content: "because tests fail", ephemeral: true } },
    calls: ["reply"],
  },
  {
    kind: "action",
    plugin: "workspace",
    register: () =>
      workspace.onAction("approve", async (action) => {
        await workspace.sendEphemeral(action.channel!, action.user.id, `${action.actionId}=${action.value}`);
      }),
    drive: (kit) => kit.action("approve:r1", { value: "yes", user: { id: "U0ADA" } }),
    answer: { reply: { channel: "C0TESTCHANNEL", user: "U0ADA", text: "approve:r1=yes" }, update: null, modal: null },
    calls: ["send-ephemeral"],
  },
  {
    kind: "action opening a view",
    plugin: "workspace",
    register: () =>
      workspace.onAction("reject", async (action) => {
        await workspace.openView(action, whyView("r1"));
      }),
    drive: (kit) => kit.action("reject"),
    answer: { reply: null, modal: whyView("r1") },
    calls: ["open-view"],
  },
  {
    kind: "viewSubmission",
    plugin: "workspace",
    register: () =>
      workspace.onViewSubmission("why", async (submission) => {
        await workspace.sendMessage(
          "C0OPS",
          `${submission.user.id}: ${submission.fields.reason} (${JSON.stringify(submission.values)})`,
        );
      }),
    drive: (kit) => kit.viewSubmission("why", { reason: "flaky" }),
    answer: {
      reply: {
        channel: "C0OPS",
        text: 'U0TESTUSER: flaky ({"reason":{"reason":{"type":"plain_text_input","value":"flaky"}}})',
      },
    },
    calls: ["send-message"],
  },
];

describe("testPlugin drives every handler kind", () => {
  it.each(KINDS)(
    "$kind: the handler's answer and its provider calls",
    async ({ plugin, register, drive, answer, calls }) => {
      register();
      const result = await drive(testPlugin(project, plugin));
      expect(result).toMatchObject(answer);
      expect(result.calls.map((call) => [call.plugin, call.action])).toEqual(calls.map((action) => [plugin, action]));
      expect(result.calls[0]!.answer).toBeTruthy();
    },
  );

  it.each(KINDS)("$kind: a handler that throws rejects with its error", async ({ kind, plugin, drive }) => {
    const thrown = new Error(`${kind} broke`);
    const fail = () => {
      throw thrown;
    };
    chatserver.onCommand("deploy", fail);
    for (const name of ["approve", "size", "reject", "why"]) {
      chatserver.onComponent(name, fail);
      chatserver.onModalSubmit(name, fail);
      workspace.onAction(name, fail);
      workspace.onViewSubmission(name, fail);
    }
    await expect(drive(testPlugin(project, plugin))).rejects.toBe(thrown);
  });
});

describe("testPlugin refuses what the project did not register", () => {
  it.each([
    {
      what: "a command",
      plugin: "chatserver" as const,
      drive: (kit: TestedPlugin) => kit.command("deplyo"),
      message: 'This project has no handler for command /deplyo. Registered: "/deploy", "/status".',
    },
    {
      what: "a component",
      plugin: "chatserver" as const,
      drive: (kit: TestedPlugin) => kit.component("aprove:r1"),
      message: 'This project has no onComponent handler for "aprove:r1". Registered: "approve".',
    },
    {
      what: "a modal",
      plugin: "chatserver" as const,
      drive: (kit: TestedPlugin) => kit.modalSubmit("reason", {}),
      message: 'This project has no onModalSubmit handler for "reason". Registered: "why".',
    },
    {
      what: "an action",
      plugin: "workspace" as const,
      drive: (kit: TestedPlugin) => kit.action("ok"),
      message: 'This project has no onAction handler for "ok". Registered: "approve".',
    },
    {
      what: "a view",
      plugin: "workspace" as const,
      drive: (kit: TestedPlugin) => kit.viewSubmission("form", {}),
      message: 'This project has no onViewSubmission handler for "form". Registered: "why".',
    },
  ])("$what: not_found naming the registered ones", async ({ plugin, drive, message }) => {
    const noop = () => {};
    chatserver.onCommand("deploy", noop);
    chatserver.onCommand("status", noop);
    chatserver.onComponent("approve", noop);
    chatserver.onModalSubmit("why", noop);
    workspace.onAction("approve", noop);
    workspace.onViewSubmission("why", noop);
    const error = await drive(testPlugin(project, plugin)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatformError);
    expect(error).toMatchObject({ code: "not_found", message });
  });

  it("says when nothing of the kind is registered", async () => {
    await expect(testPlugin(project, "workspace").action("approve")).rejects.toThrow(
      'This project has no onAction handler for "approve". None is registered: import the module that registers the project\'s workspace handlers',
    );
  });

  it.each([
    {
      call: (kit: TestedPlugin) => kit.action("x"),
      plugin: "chatserver" as const,
      message: /no action: chatserver handlers are driven with command, component, modalSubmit/,
    },
    {
      call: (kit: TestedPlugin) => kit.command("x"),
      plugin: "workspace" as const,
      message: /no command: workspace handlers are driven with action, viewSubmission/,
    },
    {
      call: (kit: TestedPlugin) => kit.modalSubmit("why", { reason: 3 as unknown as string }),
      plugin: "chatserver" as const,
      message: /fields\.reason must be a string/,
    },
    {
      call: (kit: TestedPlugin) => kit.component("x", { values: [1 as unknown as string] }),
      plugin: "chatserver" as const,
      message: /values is a list of strings/,
    },
    {
      call: (kit: TestedPlugin) => kit.command("x", { user: { id: "" } }),
      plugin: "chatserver" as const,
      message: /user is \{ id, name\? \}/,
    },
  ])("bad input is refused invalid_input: $message", async ({ call, plugin, message }) => {
    const error = await call(testPlugin(project, plugin)).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "invalid_input", message: expect.stringMatching(message) });
  });

  it("takes only a project's default export and a plugin it drives", () => {
    expect(() => testPlugin(undefined as never, "chatserver")).toThrow(/project's default export/);
    expect(() => testPlugin(project, "email-send" as never)).toThrow(/"chatserver" or "workspace".*"email-send"/);
  });
});

describe("testPlugin follows a conversation", () => {
  it("a click comes from the message the command's reply posted, and the update edits it", async () => {
    chatserver.onCommand("deploy", async (cmd) => {
      await chatserver.reply(cmd, { content: "Deploy api?", components: [approveButton("r1")] });
    });
    let seen: unknown;
    chatserver.onComponent("approve", async (click) => {
      seen = click.message;
      await chatserver.update(click, { content: "Approved", components: [] });
    });
    const kit = testPlugin(project, "chatserver");
    const replied = await kit.command("deploy");
    await kit.component("approve:r1");
    const posted = replied.calls[0]!.answer as { messageId: string };
    expect(seen).toEqual({
      id: posted.messageId,
      channelId: "100000000000000003",
      content: "Deploy api?",
      components: [[{ type: "button", customId: "approve:r1", label: "Approve", style: "primary" }]],
    });
    // The update took the buttons away: the same message without them is what a second click would see.
    const again = await kit.component("approve:r1");
    expect(seen).toMatchObject({ content: "", components: [[{ customId: "approve:r1" }]] });
    expect((seen as { id: string }).id).not.toBe(posted.messageId);
    expect(again.update).toEqual({ content: "Approved", components: [] });
  });

  it("a submitted view carries the private_metadata it was opened with", async () => {
    workspace.onAction("reject", async (action) => {
      await workspace.openView(action, whyView("run-7"));
    });
    let metadata: string | undefined;
    workspace.onViewSubmission("why", (submission) => {
      metadata = submission.privateMetadata;
    });
    const kit = testPlugin(project, "workspace");
    await kit.action("reject");
    await kit.viewSubmission("why", { reason: "no" });
    expect(metadata).toBe("run-7");
  });

  it("an action comes from the posted message showing its element, with its value and block", async () => {
    workspace.onAction("post", async (action) => {
      await workspace.sendMessage(action.channel!, "Deploy?", {
        blocks: [
          {
            type: "actions",
            block_id: "choices",
            elements: [
              { type: "button", action_id: "approve:r2", value: "r2", text: { type: "plain_text", text: "OK" } },
            ],
          },
        ],
      });
    });
    let clicked: unknown;
    workspace.onAction("approve", (action) => {
      clicked = action;
    });
    const kit = testPlugin(project, "workspace");
    const posted = await kit.action("post");
    await kit.action("approve:r2");
    const { ts } = posted.calls[0]!.answer as { ts: string };
    expect(clicked).toMatchObject({
      actionId: "approve:r2",
      blockId: "choices",
      value: "r2",
      values: ["r2"],
      channel: "C0TESTCHANNEL",
      messageTs: ts,
      message: { ts, text: "Deploy?" },
    });
  });

  it("a run a handler starts is driven by the kit and recorded", async () => {
    workflow("deploy-approval", { start: async () => ({ done: true, result: "deployed" }) });
    chatserver.onCommand("deploy", async (cmd) => {
      const run = await workflow.start("deploy-approval", {});
      await chatserver.reply(cmd, `started ${run.id}`);
    });
    const answer = await testPlugin(project, "chatserver").command("deploy");
    expect(answer.runs).toHaveLength(1);
    expect(answer.runs[0]!.view.status).toBe("completed");
    expect(answer.reply).toEqual({ content: `started ${answer.runs[0]!.id}` });
  });
});
