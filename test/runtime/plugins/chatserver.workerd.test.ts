// `chatserver` in the platform module, end to end in workerd: the fake chat
// server triggers a command, the plugin delivers it to a real project worker
// (the entry wrapper), the handler registered with chatserver.onCommand answers
// with chatserver.reply through the plugin's proxy route, and the fake sees the edit.
// Messages come over the fake's Gateway through the plugin's relay.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { Router } from "itty-router";
import { beforeEach, describe, expect, it } from "vitest";
import { TEST_GUILD, TEST_USER } from "#src/dev/fakes/chatserver/fakeChatServer.ts";
import type { ChatServerEnv } from "#src/plugins/chatserver/env.ts";
import plugin from "#src/plugins/chatserver/index.ts";
import { relayConnection } from "#src/plugins/chatserver/gatewayRelay/GatewayRelay.ts";
import { createPlatformWorker } from "#src/runtime/entry/createPlatformWorker.ts";
import type { PlatformEnv } from "#src/runtime/entry/platformEnv.ts";
import {
  chatserver,
  resetChatServerHandlers,
  type ChatCommand,
  type ChatComponentInteraction,
  type ChatEvent,
  type ChatModalSubmit,
} from "#src/runtime/plugins/chatserver.ts";
import { platformRuntime } from "#src/runtime/entry/platformRuntime.ts";
import { callProjectWorker } from "#src/workers/dispatch/callProjectWorker.ts";
import type { ProjectRow } from "#src/workers/db/projectsTable.ts";
import { PlatformError } from "#src/core/errors.ts";
import { userWithProject, testChatServer, chatServerPluginEnv } from "#test/support/workerd/index.ts";

const FAKE = "https://discord.fake";
const PLUGIN = "https://chatserver.plugin.test";

const commands: ChatCommand[] = [];
const events: ChatEvent[] = [];

function setup(row: ProjectRow) {
  const pending: ExecutionContext[] = [];
  const ctx = () => {
    const c = createExecutionContext();
    pending.push(c);
    return c;
  };
  const router = Router();
  router.get("/", () => new Response("home"));
  const project = createPlatformWorker(router);
  let penv: ChatServerEnv;
  const projectEnv: PlatformEnv = {
    PLATFORM_WORKER_SECRET: row.worker_secret,
    PLATFORM_PROJECT_ID: String(row.id),
    PLATFORM_PROJECT_SLUG: row.slug,
    CHATSERVER_PLUGIN: {
      fetch: (input: RequestInfo | URL, init?: RequestInit) => plugin.fetch(new Request(input, init), penv, ctx()),
    },
  };
  const projectFetcher = {
    fetch: (input: RequestInfo | URL, init?: RequestInit) =>
      project.fetch!(new Request(input, init) as never, projectEnv, ctx()),
  } as unknown as Fetcher;
  const fake = testChatServer({ webhookUrl: `${PLUGIN}/webhook`, deliver: (r) => plugin.fetch(r, penv, ctx()) });
  penv = chatServerPluginEnv(fake, { DISPATCHER: { get: () => projectFetcher }, CHATSERVER_PUBLIC_URL: PLUGIN });
  return {
    fake,
    projectEnv,
    projectFetcher,
    /** The plugin's Gateway relay (what the GatewayRelay actor runs), connected to the fake. */
    async relay() {
      const relay = relayConnection(penv, [0, 1], { load: async () => null, save: async () => {} });
      await relay.start();
      for (let i = 0; i < 20 && relay.status().phase !== "ready"; i++) await new Promise((r) => setTimeout(r, 5));
      expect(relay.status().phase).toBe("ready");
      return relay;
    },
    trigger: (body: Record<string, unknown>) =>
      fake.fetch(new Request(`${FAKE}/__fake/trigger`, { method: "POST", body: JSON.stringify(body) })),
    async settle() {
      // Each settled context may start others (delivery → handler → proxy call).
      while (pending.length) await waitOnExecutionContext(pending.shift()!);
    },
  };
}

let row: ProjectRow;
beforeEach(async () => {
  row = (await userWithProject("owner@example.test", "shop")).row;
  // The server is already claimed by the project (the install flow is tested in chatserver.plugin.test.ts).
  await (await import("cloudflare:test")).env.DB.prepare(
    "INSERT INTO plugin_resources (plugin_id, resource_type, project_id, external_resource_id, display_name, created_at) VALUES ('chatserver', 'server', ?, ?, 'Test Server', ?)",
  )
    .bind(row.id, TEST_GUILD.id, Date.now())
    .run();
  resetChatServerHandlers();
  commands.length = 0;
  events.length = 0;
  chatserver.onCommand(
    "hello",
    async (cmd) => {
      commands.push(cmd);
      await chatserver.reply(cmd, `Hello ${cmd.user?.name}, you said ${String(cmd.args.text)}`);
      await chatserver.followup(cmd, "and one more thing");
    },
    { description: "Say hello" },
  );
  chatserver.onEvent("message", async (ev) => {
    events.push(ev);
    const sent = await chatserver.sendMessage(ev.channelId!, `echo: ${ev.content}`);
    await chatserver.editMessage(sent.channelId, sent.messageId, `echo (edited): ${ev.content}`);
  });
});

describe("chatserver runtime", () => {
  it("a command reaches onCommand, and reply/followup land at the chat server", async () => {
    const w = setup(row);
    // The fake knows the server is installed only after a consent; approve one directly.
    w.fake.state().installedGuilds.add(TEST_GUILD.id);
    const res = await w.trigger({ kind: "command", guildId: TEST_GUILD.id, name: "hello", text: "hi" });
    // The handler replied in time, through the callback endpoint: the webhook's own answer is 202 with no body.
    expect(await res.json()).toMatchObject({
      status: 202,
      body: null,
      interaction: { acknowledged: true, answeredWith: 4, failed: null },
    });
    await w.settle();
    expect(commands).toHaveLength(1);
    expect(commands[0]).toMatchObject({
      name: "hello",
      args: { text: "hi" },
      guildId: TEST_GUILD.id,
      project: { slug: "shop" },
      user: { name: "Test User" },
    });
    const contents = [...w.fake.state().messages.values()].map((m) => m.content);
    expect(contents).toContain("Hello Test User, you said hi");
    expect(contents).toContain("and one more thing");
  });

  it("a message over the Gateway reaches onEvent through the relay; sendMessage and editMessage reach the channel", async () => {
    const w = setup(row);
    w.fake.state().installedGuilds.add(TEST_GUILD.id);
    const relay = await w.relay();
    const res = await w.trigger({ kind: "message", guildId: TEST_GUILD.id, text: "ping" });
    expect(await res.json()).toMatchObject({ delivered: "gateway", live: 1 });
    for (let i = 0; i < 20 && events.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    await relay.settled();
    await w.settle();
    relay.shutdown();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: "message", content: "ping", channelId: TEST_GUILD.channels[0] });
    const contents = [...new Set(w.fake.state().messages.values())].map((m) => m.content);
    expect(contents).toContain("echo (edited): ping");
  });

  it("reports commands and events in the project's metadata", async () => {
    const w = setup(row);
    const response = await callProjectWorker({ get: () => w.projectFetcher }, row, {
      method: "GET",
      pathAndQuery: "/__platform/metadata",
    });
    expect(((await response.json()) as { plugins: { chatserver: unknown } }).plugins.chatserver).toEqual({
      commands: [{ name: "hello", description: "Say hello" }],
      events: ["message"],
    });
  });

  it("refuses bad input before any network call", async () => {
    const w = setup(row);
    platformRuntime.useEnv(w.projectEnv);
    const fake = { replyToken: "x", env: w.projectEnv } as unknown as ChatCommand;
    await expect(chatserver.reply(fake, "")).rejects.toMatchObject({ code: "invalid_input" });
    await expect(chatserver.reply(fake, "x".repeat(2001))).rejects.toMatchObject({ code: "invalid_input" });
    await expect(chatserver.reply({} as ChatCommand, "hi")).rejects.toMatchObject({ code: "invalid_input" });
    await expect(chatserver.sendMessage("general", "hi")).rejects.toMatchObject({ code: "invalid_input" });
    await expect(chatserver.editMessage("1", "x", "hi")).rejects.toMatchObject({ code: "invalid_input" });
    expect(w.fake.recorded()).toHaveLength(0);
    expect(() => chatserver.onCommand("Hello World", () => {})).toThrow(PlatformError);
    expect(() => chatserver.onEvent("typing" as never, () => {})).toThrow(PlatformError);
  });
});

describe("chatserver runtime: components and modals", () => {
  const seen: (ChatComponentInteraction | ChatModalSubmit)[] = [];
  beforeEach(() => {
    seen.length = 0;
    chatserver.onCommand("deploy", async (cmd) => {
      await chatserver.reply(cmd, {
        content: "Deploy?",
        components: [
          { type: "button", customId: "approve:run-1", label: "Approve", style: "success" },
          { type: "button", customId: "reject:run-1", label: "Reject", style: "danger" },
        ],
      });
    });
    chatserver.onComponent("approve", async (click) => {
      seen.push(click);
      await chatserver.update(click, { content: `Approved by ${click.user?.name}`, components: [] });
    });
    chatserver.onComponent("reject", async (click) => {
      seen.push(click);
      await chatserver.showModal(click, {
        customId: `why:${click.customId.split(":")[1]}`,
        title: "Why reject?",
        fields: [{ customId: "reason", label: "Reason", style: "paragraph" }],
      });
    });
    chatserver.onModalSubmit("why", async (submit) => {
      seen.push(submit);
      await chatserver.update(submit, { content: `Rejected: ${submit.fields.reason}`, components: [] });
    });
  });

  async function deployMessage(w: ReturnType<typeof setup>) {
    w.fake.state().installedGuilds.add(TEST_GUILD.id);
    const out = (await (await w.trigger({ kind: "command", guildId: TEST_GUILD.id, name: "deploy" })).json()) as any;
    expect(out.interaction).toMatchObject({ answeredWith: 4, failed: null });
    await w.settle();
    return [...w.fake.state().messages.values()].find((m) => m.content === "Deploy?")!;
  }

  it("a reply with buttons; a click on `approve:run-1` runs onComponent('approve') with the message in the written shape; update edits it", async () => {
    const w = setup(row);
    const message = await deployMessage(w);
    const out = (await (
      await w.trigger({ kind: "component", guildId: TEST_GUILD.id, customId: "approve:run-1" })
    ).json()) as any;
    expect(out.interaction).toMatchObject({ answeredWith: 7, failed: null });
    await w.settle();
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      customId: "approve:run-1",
      componentType: "button",
      values: [],
      user: { name: "Test User" },
      channelId: TEST_GUILD.channels[0],
      message: {
        id: message.id,
        content: "Deploy?",
        components: [
          [
            { type: "button", customId: "approve:run-1", label: "Approve", style: "success" },
            { type: "button", customId: "reject:run-1", label: "Reject", style: "danger" },
          ],
        ],
      },
    });
    expect(w.fake.state().messages.get(message.id)).toMatchObject({ content: "Approved by Test User", components: [] });
  });

  it("a click that opens a modal; its submit reaches onModalSubmit with fields by customId and updates the message", async () => {
    const w = setup(row);
    const message = await deployMessage(w);
    await w.trigger({ kind: "component", guildId: TEST_GUILD.id, customId: "reject:run-1" });
    await w.settle();
    const out = (await (
      await w.trigger({ kind: "modal", guildId: TEST_GUILD.id, customId: "why:run-1", fields: { reason: "Friday" } })
    ).json()) as any;
    expect(out.interaction).toMatchObject({ answeredWith: 7, failed: null });
    await w.settle();
    expect(seen.map((s) => s.customId)).toEqual(["reject:run-1", "why:run-1"]);
    expect((seen[1] as ChatModalSubmit).fields).toEqual({ reason: "Friday" });
    expect(w.fake.state().messages.get(message.id)).toMatchObject({ content: "Rejected: Friday" });
  });

  it("a customId no handler matches: the user is told privately", async () => {
    const w = setup(row);
    w.fake.state().installedGuilds.add(TEST_GUILD.id);
    chatserver.onCommand("odd", (cmd) =>
      chatserver.reply(cmd, { components: [{ type: "button", customId: "approved", label: "Not approve:" }] }),
    );
    await w.trigger({ kind: "command", guildId: TEST_GUILD.id, name: "odd" });
    await w.settle();
    // "approved" is neither "approve" nor "approve:…".
    const out = (await (
      await w.trigger({ kind: "component", guildId: TEST_GUILD.id, customId: "approved" })
    ).json()) as any;
    expect(out.body).toMatchObject({
      type: 4,
      data: { content: "This server's project does not handle this button (yet).", flags: 64 },
    });
    expect(seen).toHaveLength(0);
  });

  // The red-team's click on another member's Approve button: the approver check answers the clicker privately
  // and the handler goes no further; the approver's click goes through.
  it.each([
    { names: "no approvers", approvers: [] as string[], outcome: "refused" },
    { names: "someone else", approvers: ["999999999999999999"], outcome: "refused" },
    { names: "the clicker", approvers: [TEST_USER.id], outcome: "allowed" },
  ])("refuseNonApprover, when the run names $names: the click is $outcome", async ({ approvers, outcome }) => {
    const w = setup(row);
    const message = await deployMessage(w);
    resetChatServerHandlers();
    const decided: string[] = [];
    chatserver.onComponent("approve", async (click) => {
      if (await chatserver.refuseNonApprover(click, approvers)) return;
      decided.push(click.user!.id);
      await chatserver.update(click, { content: `Approved by ${click.user?.name}`, components: [] });
    });
    const out = (await (
      await w.trigger({ kind: "component", guildId: TEST_GUILD.id, customId: "approve:run-1" })
    ).json()) as any;
    await w.settle();
    if (outcome === "refused") {
      expect(out.interaction).toMatchObject({ answeredWith: 4, failed: null });
      expect([...w.fake.state().messages.values()].at(-1)).toMatchObject({
        content: "You are not one of the approvers of this request.",
        flags: 64,
      });
      expect(decided).toEqual([]);
      expect(w.fake.state().messages.get(message.id)).toMatchObject({ content: "Deploy?" });
    } else {
      expect(out.interaction).toMatchObject({ answeredWith: 7, failed: null });
      expect(decided).toEqual([TEST_USER.id]);
      expect(w.fake.state().messages.get(message.id)).toMatchObject({ content: "Approved by Test User" });
    }
  });

  it("refuses components, modals and answers that break the rules before any network call", async () => {
    const w = setup(row);
    platformRuntime.useEnv(w.projectEnv);
    const click = { replyToken: "x", env: w.projectEnv } as unknown as ChatComponentInteraction;
    const six = Array.from({ length: 6 }, (_, i) => [{ type: "button" as const, customId: `b${i}`, label: "B" }]);
    await expect(chatserver.reply(click, { content: "x", components: six })).rejects.toMatchObject({
      code: "invalid_input",
      message: "components must have at most 5 rows (got 6).",
    });
    await expect(chatserver.update(click, {})).rejects.toMatchObject({
      message: "An edit needs content or components.",
    });
    await expect(chatserver.showModal(click, { customId: "m", title: "T", fields: [] })).rejects.toMatchObject({
      message: "modal.fields must be an array of 1–5 fields.",
    });
    await expect(chatserver.reply(click, { content: "x", ephemeral: "yes" as never })).rejects.toMatchObject({
      message: "ephemeral must be true or false.",
    });
    await expect(chatserver.sendMessage("1", { components: [] })).rejects.toMatchObject({
      message: "A message needs content (1–2000 characters) or components.",
    });
    expect(() => chatserver.onComponent("x".repeat(101), () => {})).toThrow(PlatformError);
    expect(() => chatserver.onModalSubmit("", () => {})).toThrow(PlatformError);
    expect(w.fake.recorded()).toHaveLength(0);
  });
});
