// Components and modals on the chat-server plugin, against the fake chat server,
// with a stand-in project whose handler answers through the plugin's proxy routes:
// the first answer within the deadline (by callback) or after it (deferred inline,
// then the interaction webhook), delivery to the owner of the server only, once,
// ephemeral failures, and the limits refused before any call.
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { claimResource } from "#src/workers/db/resourceClaims.ts";
import { createFakeChatServer, OTHER_GUILD, TEST_GUILD } from "#src/dev/fakes/chatserver/fakeChatServer.ts";
import type { FakeChatServer } from "#src/dev/fakes/chatserver/fakeChatServer.ts";
import type { ChatServerEnv } from "#src/plugins/chatserver/env.ts";
import plugin from "#src/plugins/chatserver/index.ts";
import type { ProjectRow } from "#src/workers/db/projectsTable.ts";
import { fakeDispatcher, pluginEnv, signedRequest, twoProjects } from "#test/support/workerd/index.ts";
import type { FakeDispatcher } from "#test/support/workerd/index.ts";

const FAKE = "https://discord.fake";
const PLUGIN = "https://chatserver.plugin.test";
const SEED = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
const PUBLIC_KEY = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
const APP = "900000000000000001";
const CHANNEL = TEST_GUILD.channels[0]!;

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
}
function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** What the stand-in project does with a delivery: nothing, or its handler's calls. */
type Handler = (delivery: Record<string, any>) => Promise<Response | undefined> | Response | undefined;

interface World {
  fake: FakeChatServer;
  dispatcher: FakeDispatcher;
  env: ChatServerEnv;
  /** Fired by a test: the webhook's answer budget has passed. */
  deadline: Deferred;
  /** The answers of the proxy calls the handler made (status and JSON). */
  answers: { status: number; body: any }[];
  proxy(project: ProjectRow, route: string, body: unknown): Promise<Response>;
  trigger(body: Record<string, unknown>): Promise<any>;
  state(): Promise<any>;
  settle(): Promise<void>;
}

let alpha: ProjectRow;
let beta: ProjectRow;
beforeEach(async () => {
  ({ a: alpha, b: beta } = await twoProjects());
  for (const [project, guild] of [
    [alpha, TEST_GUILD],
    [beta, OTHER_GUILD],
  ] as const)
    await claimResource(env.DB, {
      pluginId: "chatserver",
      resourceType: "server",
      projectId: project.id,
      externalResourceId: guild.id,
      displayName: guild.name,
    });
});

function world(handler: Handler = () => undefined): World {
  const pending: ExecutionContext[] = [];
  const deadline = deferred();
  const answers: World["answers"] = [];
  let pluginEnvValue: ChatServerEnv;
  const call = async (request: Request) => {
    const ctx = createExecutionContext();
    pending.push(ctx);
    return plugin.fetch(request, pluginEnvValue, ctx);
  };
  const proxy = async (project: ProjectRow, route: string, body: unknown) => {
    const response = await call(await signedRequest({ project, path: `/proxy/${route}`, body: JSON.stringify(body) }));
    answers.push({ status: response.status, body: await response.clone().json() });
    return response;
  };
  const dispatcher = fakeDispatcher(async (request) => {
    const delivery = (await request.json()) as Record<string, any>;
    return (await handler(delivery)) ?? Response.json({ ok: true });
  });
  const fake = createFakeChatServer({
    baseUrl: FAKE,
    applicationId: APP,
    clientId: APP,
    clientSecret: "client-secret",
    botToken: "bot-token",
    signingSeed: SEED,
    webhookUrl: `${PLUGIN}/webhook`,
    deliver: call,
  });
  fake.state().installedGuilds.add(TEST_GUILD.id);
  fake.state().installedGuilds.add(OTHER_GUILD.id);
  pluginEnvValue = pluginEnv({
    DISPATCHER: dispatcher.namespace,
    CHATSERVER_BASE_URL: FAKE,
    CHATSERVER_PUBLIC_URL: PLUGIN,
    CHATSERVER_APPLICATION_ID: APP,
    CHATSERVER_CLIENT_ID: APP,
    CHATSERVER_CLIENT_SECRET: "client-secret",
    CHATSERVER_BOT_TOKEN: "bot-token",
    CHATSERVER_PUBLIC_KEY: PUBLIC_KEY,
    CHATSERVER_FETCH: { fetch: (r: Request) => fake.fetch(r) },
    CHATSERVER_ACK_WAIT: () => deadline.promise,
  }) as ChatServerEnv;
  return {
    fake,
    dispatcher,
    env: pluginEnvValue,
    deadline,
    answers,
    proxy,
    async trigger(body) {
      const response = await fake.fetch(
        new Request(`${FAKE}/__fake/trigger`, { method: "POST", body: JSON.stringify(body) }),
      );
      return response.json();
    },
    async state() {
      return (await fake.fetch(new Request(`${FAKE}/__fake/state`))).json();
    },
    async settle() {
      while (pending.length) await waitOnExecutionContext(pending.shift()!);
    },
  };
}

const approval = (runId: string) => [
  { type: "button", customId: `approve:${runId}`, label: "Approve", style: "success" },
  { type: "button", customId: `reject:${runId}`, label: "Reject", style: "danger" },
];

/** The bot posts a message with `components` for `project` (through the proxy, as chatserver.sendMessage does). */
async function post(w: World, project: ProjectRow, components: unknown, channelId = CHANNEL): Promise<string> {
  const response = await w.proxy(project, "send-message", { channelId, content: "Deploy?", components });
  expect(response.status, JSON.stringify(w.answers.at(-1))).toBe(200);
  return ((await response.json()) as { messageId: string }).messageId;
}

const messageById = (state: any, id: string) => state.messages.find((m: any) => m.id === id);

describe("a click on a button", () => {
  it("is delivered to the project that claimed the server, once, with the customId, the user and the message", async () => {
    const w = world();
    const messageId = await post(w, alpha, approval("run-1"));
    const out = await w.trigger({
      kind: "component",
      guildId: TEST_GUILD.id,
      customId: "approve:run-1",
      deliveries: 2,
    });
    // The handler did not answer: deferred update (6) inline, again for the repeat, delivered once.
    expect(out.answers.map((a: any) => a.body)).toEqual([{ type: 6 }, { type: 6 }]);
    expect(out.interaction).toMatchObject({ acknowledged: true, answeredWith: 6, failed: null });
    await w.settle();
    expect(w.dispatcher.calls).toHaveLength(1);
    expect(w.dispatcher.calls[0]!.scriptName).toBe(alpha.script_name);
    const delivery = JSON.parse(w.dispatcher.calls[0]!.body);
    expect(delivery).toMatchObject({
      kind: "component",
      name: "approve:run-1",
      project: { slug: "alpha" },
      user: { id: "555555555555555555", name: "Test User" },
      event: {
        customId: "approve:run-1",
        componentType: "button",
        values: [],
        guildId: TEST_GUILD.id,
        channelId: CHANNEL,
        message: { id: messageId, content: "Deploy?" },
      },
    });
    expect(delivery.event.message.components[0].components).toHaveLength(2);
    expect(typeof delivery.replyToken).toBe("string");
    expect(w.dispatcher.calls[0]!.body).not.toContain(out.payload.token);
  });

  it("on another project's server reaches that project only, whatever its customId says", async () => {
    const w = world();
    // Beta's bot posts a button carrying an id of alpha's (anyone can write any customId).
    await post(w, beta, [{ type: "button", customId: "approve:alpha-run", label: "Approve" }], OTHER_GUILD.channels[0]);
    await w.trigger({ kind: "component", guildId: OTHER_GUILD.id, customId: "approve:alpha-run" });
    await w.settle();
    expect(w.dispatcher.calls.map((c) => c.scriptName)).toEqual([beta.script_name]);
  });

  it("on a server no project claimed is refused 404, nothing delivered", async () => {
    const w = world();
    await post(w, alpha, approval("run-1"));
    const unclaimedGuild = "777777777777777777";
    const body = JSON.stringify({
      id: "1234567890123",
      application_id: APP,
      type: 3,
      token: "t",
      guild_id: unclaimedGuild,
      channel_id: "1",
      data: { custom_id: "approve:run-1", component_type: 2 },
      message: { id: "99", channel_id: "1", content: "", components: [] },
      member: { user: { id: "5", username: "u" } },
    });
    const ts = String(Math.floor(Date.now() / 1000));
    const { signEd25519 } = await import("#src/core/crypto/ed25519.ts");
    const response = await plugin.fetch(
      new Request(`${PLUGIN}/webhook`, {
        method: "POST",
        body,
        headers: { "X-Signature-Ed25519": await signEd25519(SEED, ts + body), "X-Signature-Timestamp": ts },
      }),
      w.env,
      createExecutionContext(),
    );
    expect(response.status).toBe(404);
    expect(w.dispatcher.calls).toHaveLength(0);
  });

  it("answered in time with update: the message is edited by callback 7 and the webhook says 202", async () => {
    const w = world(async (d) => {
      await w.proxy(alpha, "update", { replyToken: d.replyToken, content: "Approved by Test User", components: [] });
      return undefined;
    });
    const messageId = await post(w, alpha, approval("run-1"));
    const out = await w.trigger({ kind: "component", guildId: TEST_GUILD.id, customId: "approve:run-1" });
    expect(out).toMatchObject({ status: 202, body: null, interaction: { answeredWith: 7, failed: null } });
    expect(w.answers.at(-1)).toEqual({ status: 200, body: { messageId, channelId: CHANNEL } });
    expect(messageById(await w.state(), messageId)).toMatchObject({ content: "Approved by Test User", components: [] });
  });

  it("answered after the deadline: deferred (6) inline, then update edits @original, the message the button is on", async () => {
    const gate = deferred();
    const w = world(async (d) => {
      await gate.promise; // slow work
      await w.proxy(alpha, "update", { replyToken: d.replyToken, content: "Done" });
      return undefined;
    });
    const messageId = await post(w, alpha, approval("run-2"));
    const triggered = w.trigger({ kind: "component", guildId: TEST_GUILD.id, customId: "reject:run-2" });
    w.deadline.resolve();
    const out = await triggered;
    expect(out).toMatchObject({ status: 200, body: { type: 6 }, interaction: { answeredWith: 6, failed: null } });
    gate.resolve();
    await w.settle();
    expect(w.answers.at(-1)!.status).toBe(200);
    expect(messageById(await w.state(), messageId)).toMatchObject({ content: "Done" });
  });

  it("a handler that fails in time gets an ephemeral answer naming the button", async () => {
    const w = world(() => new Response("boom", { status: 500 }));
    await post(w, alpha, approval("run-3"));
    const out = await w.trigger({ kind: "component", guildId: TEST_GUILD.id, customId: "approve:run-3" });
    expect(out.body).toEqual({
      type: 4,
      data: { content: "Sorry, this button failed in the project.", flags: 64, allowed_mentions: { parse: [] } },
    });
    const state = await w.state();
    expect(state.messages.at(-1)).toMatchObject({ content: "Sorry, this button failed in the project.", flags: 64 });
  });

  it("a project with no handler for it says so, privately", async () => {
    const w = world(() =>
      Response.json({ error: { code: "not_found", message: "no handler" }, handled: 0 }, { status: 404 }),
    );
    await post(w, alpha, approval("run-4"));
    const out = await w.trigger({ kind: "component", guildId: TEST_GUILD.id, customId: "approve:run-4" });
    expect(out.body.data).toMatchObject({
      content: "This server's project does not handle this button (yet).",
      flags: 64,
    });
  });

  it("reply with ephemeral is the first answer (callback 4, flags 64); a second reply follows up", async () => {
    const w = world(async (d) => {
      await w.proxy(alpha, "reply", {
        replyToken: d.replyToken,
        content: "This run already finished.",
        ephemeral: true,
      });
      await w.proxy(alpha, "reply", { replyToken: d.replyToken, content: "Still finished." });
      return undefined;
    });
    await post(w, alpha, approval("run-5"));
    const out = await w.trigger({ kind: "component", guildId: TEST_GUILD.id, customId: "approve:run-5" });
    expect(out.interaction).toMatchObject({ answeredWith: 4, failed: null });
    const state = await w.state();
    expect(state.messages.slice(-2)).toEqual([
      expect.objectContaining({ content: "This run already finished.", flags: 64 }),
      expect.objectContaining({ content: "Still finished.", flags: 0 }),
    ]);
  });
});

describe("a select", () => {
  const select = {
    type: "select",
    customId: "env",
    placeholder: "Where to?",
    options: [
      { label: "Staging", value: "staging" },
      { label: "Production", value: "prod" },
    ],
  };

  it("the chosen value reaches the handler", async () => {
    const w = world();
    await post(w, alpha, [select]);
    const out = await w.trigger({ kind: "component", guildId: TEST_GUILD.id, customId: "env", values: ["prod"] });
    expect(out.status).toBe(200);
    await w.settle();
    expect(JSON.parse(w.dispatcher.calls[0]!.body).event).toMatchObject({
      customId: "env",
      componentType: "select",
      values: ["prod"],
    });
  });

  it.each([
    ["a value it does not offer", { values: ["dev"] }, /Not options of this select: dev/],
    ["two values where it takes one", { values: ["prod", "staging"] }, /takes 1 value\(s\) \(got 2\)/],
    ["a customId no message shows", { customId: "nope" }, /shows a component with custom_id "nope"/],
  ])("the fake refuses %s, as the chat server never sends it: nothing delivered", async (_name, extra, error) => {
    const w = world();
    await post(w, alpha, [select]);
    const out = await w.trigger({ kind: "component", guildId: TEST_GUILD.id, customId: "env", ...extra });
    expect(out.error).toMatch(error);
    expect(w.dispatcher.calls).toHaveLength(0);
  });
});

describe("a modal", () => {
  const modal = {
    customId: "reason:run-9",
    title: "Why reject?",
    fields: [
      { customId: "why", label: "Reason", style: "paragraph" },
      { customId: "ticket", label: "Ticket", required: false },
    ],
  };

  it("shown as the first answer to a click, submitted with its fields, which reach the handler by customId", async () => {
    const w = world(async (d) => {
      if (d.kind === "component") await w.proxy(alpha, "show-modal", { replyToken: d.replyToken, modal });
      if (d.kind === "modal")
        await w.proxy(alpha, "update", { replyToken: d.replyToken, content: `Rejected: ${d.event.fields.why}` });
      return undefined;
    });
    const messageId = await post(w, alpha, approval("run-9"));
    const opened = await w.trigger({ kind: "component", guildId: TEST_GUILD.id, customId: "reject:run-9" });
    expect(opened.interaction).toMatchObject({ answeredWith: 9, failed: null });
    expect((await w.state()).modals).toMatchObject([{ customId: "reason:run-9", title: "Why reject?" }]);
    const submitted = await w.trigger({
      kind: "modal",
      guildId: TEST_GUILD.id,
      customId: "reason:run-9",
      fields: { why: "not on a Friday" },
    });
    expect(submitted.interaction).toMatchObject({ answeredWith: 7, failed: null });
    await w.settle();
    const delivery = JSON.parse(w.dispatcher.calls[1]!.body);
    expect(delivery).toMatchObject({
      kind: "modal",
      name: "reason:run-9",
      event: { customId: "reason:run-9", fields: { why: "not on a Friday", ticket: "" }, message: { id: messageId } },
    });
    expect(messageById(await w.state(), messageId).content).toBe("Rejected: not on a Friday");
    expect((await w.state()).modals).toEqual([]);
  });

  it("after the deadline is refused with a clear conflict, before any call", async () => {
    const gate = deferred();
    const w = world(async (d) => {
      await gate.promise;
      await w.proxy(alpha, "show-modal", { replyToken: d.replyToken, modal });
      return undefined;
    });
    await post(w, alpha, approval("run-10"));
    const triggered = w.trigger({ kind: "component", guildId: TEST_GUILD.id, customId: "reject:run-10" });
    w.deadline.resolve();
    await triggered;
    const calls = w.fake.recorded().length;
    gate.resolve();
    await w.settle();
    expect(w.answers.at(-1)).toEqual({
      status: 409,
      body: {
        error: {
          code: "conflict",
          message:
            "A modal can only be the first answer to an interaction, within 3 seconds: call chatserver.showModal before any slow work, and before reply or update.",
        },
      },
    });
    expect(w.fake.recorded()).toHaveLength(calls);
  });

  it.each([
    ["a required field left empty", { ticket: "T-1" }, /The field why is required/],
    ["a field it does not have", { why: "x", extra: "y" }, /has no field extra/],
  ])("the fake refuses a submit with %s: nothing delivered", async (_name, fields, error) => {
    const w = world(async (d) => {
      if (d.kind === "component") await w.proxy(alpha, "show-modal", { replyToken: d.replyToken, modal });
      return undefined;
    });
    await post(w, alpha, approval("run-9"));
    await w.trigger({ kind: "component", guildId: TEST_GUILD.id, customId: "reject:run-9" });
    const out = await w.trigger({ kind: "modal", guildId: TEST_GUILD.id, customId: "reason:run-9", fields });
    expect(out.error).toMatch(error);
    await w.settle();
    expect(w.dispatcher.calls.map((c) => JSON.parse(c.body).kind)).toEqual(["component"]);
  });
});

describe("a command answered after its deadline", () => {
  it("an ephemeral reply replaces the public 'thinking…' with a private message", async () => {
    const gate = deferred();
    const w = world(async (d) => {
      await gate.promise;
      await w.proxy(alpha, "reply", { replyToken: d.replyToken, content: "Only you see this", ephemeral: true });
      return undefined;
    });
    const triggered = w.trigger({ kind: "command", guildId: TEST_GUILD.id, name: "deploy" });
    w.deadline.resolve();
    expect((await triggered).body).toEqual({ type: 5 });
    expect((await w.state()).messages.at(-1)).toMatchObject({ content: "", flags: 128 }); // "thinking…"
    gate.resolve();
    await w.settle();
    const messages = (await w.state()).messages;
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({ content: "Only you see this", flags: 64 });
  });

  it("update is refused: a command has no message of its own to edit", async () => {
    const w = world(async (d) => {
      await w.proxy(alpha, "update", { replyToken: d.replyToken, content: "x" });
      return undefined;
    });
    await w.trigger({ kind: "command", guildId: TEST_GUILD.id, name: "deploy" });
    await w.settle();
    expect(w.answers.at(-1)!.status).toBe(400);
    expect(w.answers.at(-1)!.body.error.message).toMatch(
      /chatserver\.update edits the message a button or select sits on/,
    );
  });
});

describe("limits, refused with invalid_input before any call", () => {
  const button = (i: number) => ({ type: "button", customId: `b${i}`, label: `B${i}` });
  const row = (n: number, from = 0) => Array.from({ length: n }, (_, i) => button(from + i));
  it.each([
    [
      "a customId over 100 characters",
      [{ type: "button", customId: "x".repeat(101), label: "X" }],
      /customId must be 1–100 characters/,
    ],
    ["6 rows", Array.from({ length: 6 }, (_, r) => row(1, r * 10)), /at most 5 rows \(got 6\)/],
    ["6 buttons in a row", row(6), /at most 5 buttons \(got 6\)/],
    [
      "a select of 26 options",
      [
        {
          type: "select",
          customId: "s",
          options: Array.from({ length: 26 }, (_, i) => ({ label: `${i}`, value: `${i}` })),
        },
      ],
      /options must be an array of 1–25 options/,
    ],
    [
      "a select beside a button",
      [[button(1), { type: "select", customId: "s", options: [{ label: "a", value: "a" }] }]],
      /holds a select, which takes a whole row/,
    ],
    [
      "a link button with a customId",
      [{ type: "button", url: "https://x.test", customId: "c", label: "L" }],
      /takes url, not customId/,
    ],
    ["a repeated customId", [button(1), button(1)], /repeats the customId "b1"/],
    [
      "a label over 80 characters",
      [{ type: "button", customId: "c", label: "x".repeat(81) }],
      /label must be 1–80 characters/,
    ],
  ])("%s", async (_name, components, message) => {
    const w = world();
    const response = await w.proxy(alpha, "send-message", { channelId: CHANNEL, content: "x", components });
    expect(response.status).toBe(400);
    expect(w.answers.at(-1)!.body.error).toMatchObject({
      code: "invalid_input",
      message: expect.stringMatching(message),
    });
    expect(w.fake.recorded()).toHaveLength(0);
  });

  it("a modal of 6 fields, or a title over 45 characters", async () => {
    const field = (i: number) => ({ customId: `f${i}`, label: `F${i}` });
    const w = world(async (d) => {
      await w.proxy(alpha, "show-modal", {
        replyToken: d.replyToken,
        modal: { customId: "m", title: "Six", fields: Array.from({ length: 6 }, (_, i) => field(i)) },
      });
      await w.proxy(alpha, "show-modal", {
        replyToken: d.replyToken,
        modal: { customId: "m", title: "x".repeat(46), fields: [field(1)] },
      });
      return undefined;
    });
    await w.trigger({ kind: "command", guildId: TEST_GUILD.id, name: "form" });
    await w.settle();
    expect(w.answers.map((a) => [a.status, a.body.error?.message])).toEqual([
      [400, "modal.fields must be an array of 1–5 fields."],
      [400, "modal.title must be 1–45 characters."],
    ]);
    // Neither reached the chat server: the interaction was deferred by the webhook, not by a modal.
    expect(w.fake.recorded().filter((c) => c.path.includes("/callback"))).toHaveLength(0);
  });
});
