// The chat-server plugin worker against the fake chat server, in workerd:
// webhook verification, PING, dispatch (once, even when delivered twice),
// unknown servers, the install flow, deploy and the proxy routes.
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { randomHex } from "#src/core/crypto/encoding.ts";
import {
  createFakeChatServer,
  OTHER_GUILD,
  TEST_GUILD,
  type FakeChatServer,
} from "#src/dev/fakes/chatserver/fakeChatServer.ts";
import { signEd25519 } from "#src/core/crypto/ed25519.ts";
import type { ChatServerEnv } from "#src/plugins/chatserver/env.ts";
import { problemForClose, type RelayProblem } from "#src/plugins/chatserver/gatewayRelay/relayProblem.ts";
import plugin from "#src/plugins/chatserver/index.ts";
import type { ProjectRow } from "#src/workers/db/projectsTable.ts";
import { fakeDispatcher, userWithProject, type FakeDispatcher } from "#test/support/workerd/index.ts";
import { pluginEnv, signedRequest } from "#test/support/workerd/index.ts";

const FAKE = "https://discord.fake";
const PLUGIN = "https://chatserver.plugin.test";
const SEED = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
const PUBLIC_KEY = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
const APP = "900000000000000001";

interface World {
  fake: FakeChatServer;
  dispatcher: FakeDispatcher;
  env: ChatServerEnv;
  pending: ExecutionContext[];
  call(request: Request): Promise<Response>;
  fakeCall(path: string, init?: RequestInit): Promise<Response>;
  settle(): Promise<void>;
}

function world(projectHandler?: (request: Request) => Response | Promise<Response>): World {
  const pending: ExecutionContext[] = [];
  const dispatcher = fakeDispatcher(projectHandler ? (r) => projectHandler(r) : () => Response.json({ ok: true }));
  let pluginEnvValue: ChatServerEnv;
  const call = async (request: Request) => {
    const ctx = createExecutionContext();
    pending.push(ctx);
    return plugin.fetch(request, pluginEnvValue, ctx);
  };
  const fake = createFakeChatServer({
    baseUrl: FAKE,
    applicationId: APP,
    clientId: APP,
    clientSecret: "client-secret",
    botToken: "bot-token",
    signingSeed: SEED,
    webhookUrl: `${PLUGIN}/webhook`,
    redirectUris: [`${PLUGIN}/oauth/callback`],
    deliver: call,
  });
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
  }) as ChatServerEnv;
  return {
    fake,
    dispatcher,
    env: pluginEnvValue,
    pending,
    call,
    fakeCall: (path, init) => fake.fetch(new Request(FAKE + path, init)),
    async settle() {
      while (pending.length) await waitOnExecutionContext(pending.shift()!);
    },
  };
}

async function sessionCode(
  projectId: number,
  pluginId = "chatserver",
  expiresAt = Date.now() + 120_000,
): Promise<string> {
  const code = randomHex(32);
  expect(
    await env.SESSION_CODES.get(env.SESSION_CODES.idFromName(code)).create({
      code,
      projectId,
      userId: 1,
      pluginId,
      expiresAt,
    }),
  ).toBe(true);
  return code;
}

/** The whole browser flow: /install → consent → Approve → /oauth/callback. */
async function install(
  w: World,
  projectId: number,
  guildId = TEST_GUILD.id,
  options: { cookie?: false } = {},
): Promise<Response> {
  const start = await w.call(new Request(`${PLUGIN}/install?code=${await sessionCode(projectId)}`));
  expect(start.status).toBe(302);
  const authorize = new URL(start.headers.get("location")!);
  expect(authorize.origin + authorize.pathname).toBe(`${FAKE}/oauth2/authorize`);
  const consent = await w.fake.fetch(new Request(authorize));
  expect(consent.status, await consent.clone().text()).toBe(200);
  const q = authorize.searchParams;
  const form = new URLSearchParams({
    client_id: q.get("client_id")!,
    redirect_uri: q.get("redirect_uri")!,
    state: q.get("state")!,
    scope: q.get("scope")!,
    permissions: q.get("permissions")!,
    guild_id: guildId,
    action: "approve",
  });
  const approved = await w.fakeCall("/oauth2/authorize", { method: "POST", body: form, redirect: "manual" });
  expect(approved.status).toBe(302);
  const cookie = browserCookie(start);
  return w.call(
    new Request(approved.headers.get("location")!, { headers: options.cookie === false ? {} : { cookie } }),
  );
}

/** The install cookie as a browser would send it back. */
function browserCookie(response: Response): string {
  const set = response.headers.get("set-cookie") ?? "";
  expect(set).toMatch(/HttpOnly; SameSite=Lax; Secure$/);
  return set.split(";")[0]!;
}

async function signedWebhook(
  body: string,
  options: { seed?: string; ts?: number; signature?: string | null; timestamp?: string | null } = {},
) {
  const ts = options.timestamp ?? String(options.ts ?? Math.floor(Date.now() / 1000));
  const headers: Record<string, string> = { "content-type": "application/json" };
  const signature =
    options.signature === undefined ? await signEd25519(options.seed ?? SEED, ts + body) : options.signature;
  if (signature !== null) headers["X-Signature-Ed25519"] = signature;
  if (options.timestamp !== null) headers["X-Signature-Timestamp"] = ts;
  return new Request(`${PLUGIN}/webhook`, { method: "POST", headers, body });
}

const commandBody = (guildId = TEST_GUILD.id, id = "1234567890") =>
  JSON.stringify({
    id,
    application_id: APP,
    type: 2,
    token: "tok",
    guild_id: guildId,
    channel_id: TEST_GUILD.channels[0],
    data: { name: "hello" },
    member: { user: { id: "5", username: "u" } },
  });

let alpha: ProjectRow;
let beta: ProjectRow;
beforeEach(async () => {
  alpha = (await userWithProject("alpha@example.test", "alpha")).row;
  beta = (await userWithProject("beta@example.test", "beta")).row;
});

describe("POST /webhook: verification", () => {
  const ping = JSON.stringify({ id: "1", application_id: APP, type: 1, token: "t", version: 1 });
  const cases: [string, number, () => Promise<Request>][] = [
    ["valid PING", 200, () => signedWebhook(ping)],
    [
      "forged (signed by another key)",
      401,
      () => signedWebhook(ping, { seed: "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb" }),
    ],
    ["tampered body", 401, async () => new Request(await signedWebhook(ping), { body: ping.replace('"1"', '"2"') })],
    ["stale (6 minutes old)", 401, () => signedWebhook(ping, { ts: Math.floor(Date.now() / 1000) - 360 })],
    ["from the future (6 minutes)", 401, () => signedWebhook(ping, { ts: Math.floor(Date.now() / 1000) + 360 })],
    ["unsigned", 401, () => signedWebhook(ping, { signature: null, timestamp: null })],
    ["no timestamp", 401, () => signedWebhook(ping, { timestamp: null })],
    ["malformed signature", 401, () => signedWebhook(ping, { signature: "abcd" })],
    ["signed non-JSON", 400, () => signedWebhook("not json")],
    ["signed JSON array", 400, () => signedWebhook("[1]")],
    ["signed unknown interaction type", 400, () => signedWebhook(JSON.stringify({ id: "1", type: 99 }))],
    ["oversized (> 1 MB)", 413, () => signedWebhook(JSON.stringify({ type: 1, pad: "x".repeat(1024 * 1024) }))],
  ];
  it.each(cases)("%s → %i, nothing dispatched", async (_name, status, make) => {
    const w = world();
    const response = await w.call(await make());
    expect(response.status, await response.clone().text()).toBe(status);
    if (status === 200) expect(await response.json()).toEqual({ type: 1 });
    else expect(((await response.json()) as { error: { message: string } }).error.message).toBeTruthy();
    await w.settle();
    expect(w.dispatcher.calls).toHaveLength(0);
  });

  it("the fake's own PING-shaped trigger and an event PING (type 0) are answered", async () => {
    const w = world();
    const envelopePing = JSON.stringify({ version: 1, application_id: APP, type: 0, event: null });
    expect((await w.call(await signedWebhook(envelopePing))).status).toBe(204);
  });
});

describe("POST /webhook: commands and events", () => {
  it("an unknown server gets 404 with a clear message", async () => {
    const w = world();
    const response = await w.call(await signedWebhook(commandBody(OTHER_GUILD.id)));
    expect(response.status).toBe(404);
    expect(((await response.json()) as any).error.message).toContain(`Server ${OTHER_GUILD.id} is not connected`);
    await w.settle();
    expect(w.dispatcher.calls).toHaveLength(0);
  });

  it("a command is deferred (type 5) and reaches the project once even when delivered twice", async () => {
    const w = world();
    expect((await install(w, alpha.id)).status).toBe(200);
    const res = await w.fakeCall("/__fake/trigger", {
      method: "POST",
      body: JSON.stringify({ kind: "command", guildId: TEST_GUILD.id, name: "hello", text: "hi", deliveries: 2 }),
    });
    const out = (await res.json()) as { answers: { status: number; body: unknown }[] };
    expect(out.answers).toEqual([
      { status: 200, body: { type: 5 } },
      { status: 200, body: { type: 5 } },
    ]);
    await w.settle();
    expect(w.dispatcher.calls).toHaveLength(1);
    const call = w.dispatcher.calls[0]!;
    expect(call.scriptName).toBe(alpha.script_name);
    expect(call.url.pathname).toBe("/__plugin/chatserver");
    expect(call.headers.get("x-platform-internal")).toBeTruthy();
    const body = JSON.parse(call.body);
    expect(body).toMatchObject({
      kind: "command",
      name: "hello",
      project: { slug: "alpha" },
      user: { id: "555555555555555555", name: "Test User" },
      event: { guildId: TEST_GUILD.id, options: [{ name: "text", value: "hi" }] },
    });
    expect(typeof body.replyToken).toBe("string");
    expect(call.body).not.toContain('"token"'); // the provider's interaction token never reaches the project
    expect(call.body).not.toContain(String(alpha.id) + ",");
  });

  it("signed message and reaction envelopes (another relay's; the Gateway relay is the provider's way) are dispatched once; bot messages are ignored", async () => {
    const w = world();
    await install(w, alpha.id);
    const envelope = (id: string, type: string, data: Record<string, unknown>) =>
      JSON.stringify({ version: 1, application_id: APP, type: 1, id, event: { type, timestamp: "t", data } });
    const message = envelope("71", "MESSAGE_CREATE", {
      id: "8",
      guild_id: TEST_GUILD.id,
      channel_id: TEST_GUILD.channels[0],
      content: "yo",
      author: { id: "5", username: "u" },
    });
    const reaction = envelope("72", "MESSAGE_REACTION_ADD", {
      user_id: "5",
      message_id: "8",
      guild_id: TEST_GUILD.id,
      channel_id: TEST_GUILD.channels[0],
      emoji: { name: "👍" },
    });
    for (const body of [message, message, reaction, reaction]) {
      expect((await w.call(await signedWebhook(body))).status).toBe(204);
    }
    await w.settle();
    expect(w.dispatcher.calls.map((c) => JSON.parse(c.body)).map((b) => [b.kind, b.name])).toEqual([
      ["event", "message"],
      ["event", "reaction"],
    ]);
    expect(JSON.parse(w.dispatcher.calls[0]!.body).event).toMatchObject({
      type: "message",
      content: "yo",
      guildId: TEST_GUILD.id,
    });
    const botMessage = envelope("77", "MESSAGE_CREATE", {
      id: "8",
      guild_id: TEST_GUILD.id,
      channel_id: "2",
      content: "x",
      author: { id: "9", bot: true },
    });
    expect((await w.call(await signedWebhook(botMessage))).status).toBe(204);
    const unclaimed = envelope("78", "MESSAGE_CREATE", { id: "9", guild_id: OTHER_GUILD.id, content: "x" });
    expect((await w.call(await signedWebhook(unclaimed))).status).toBe(404);
    await w.settle();
    expect(w.dispatcher.calls).toHaveLength(2);
  });

  it("the fake delivers messages and reactions only over its Gateway, never to /webhook", async () => {
    const w = world();
    await install(w, alpha.id);
    for (const kind of ["message", "reaction"]) {
      const res = await w.fakeCall("/__fake/trigger", {
        method: "POST",
        body: JSON.stringify({ kind, guildId: TEST_GUILD.id, text: "yo" }),
      });
      expect(await res.json()).toMatchObject({ delivered: "gateway", sessions: 0, live: 0 });
    }
    await w.settle();
    expect(w.dispatcher.calls).toHaveLength(0);
  });

  it("a failed dispatch releases the claim (a retry is delivered) and tells the user", async () => {
    let fail = true;
    const w = world(() => (fail ? new Response("boom", { status: 500 }) : Response.json({ ok: true })));
    await install(w, alpha.id);
    const trigger = await w.fakeCall("/__fake/trigger", {
      method: "POST",
      body: JSON.stringify({ kind: "command", guildId: TEST_GUILD.id, name: "hello" }),
    });
    const { payload } = (await trigger.json()) as { payload: any };
    await w.settle();
    const state = (await (await w.fakeCall("/__fake/state")).json()) as any;
    // Told at once, privately: the failure is the interaction's answer, an ephemeral message.
    expect(state.messages).toContainEqual(
      expect.objectContaining({ content: "Sorry, this command failed in the project.", flags: 64 }),
    );
    expect(state.interactions[0]).toMatchObject({ acknowledged: true, answeredWith: 4, failed: null });
    fail = false;
    // Re-deliver the same interaction (as a provider retry would): the released claim lets it through; it was
    // answered already, so the webhook says 202.
    expect((await w.call(await signedWebhook(JSON.stringify(payload)))).status).toBe(202);
    await w.settle();
    expect(w.dispatcher.calls).toHaveLength(2);
  });
  it("a command the project has no handler for says so in the chat", async () => {
    const w = world(() => Response.json({ error: { code: "not_found", message: "no handler" } }, { status: 404 }));
    await install(w, alpha.id);
    await w.fakeCall("/__fake/trigger", {
      method: "POST",
      body: JSON.stringify({ kind: "command", guildId: TEST_GUILD.id, name: "nope" }),
    });
    await w.settle();
    const state = (await (await w.fakeCall("/__fake/state")).json()) as any;
    expect(state.messages.map((m: any) => m.content)).toContain("This server's project does not handle /nope (yet).");
  });
});

describe("install flow", () => {
  it("claims the server and stores the connection (token sealed); the code works once", async () => {
    const w = world();
    const done = await install(w, alpha.id);
    expect(done.status).toBe(200);
    expect(await done.text()).toContain("Test Server");
    const resource = await env.DB.prepare("SELECT * FROM plugin_resources").first<any>();
    expect(resource).toMatchObject({
      plugin_id: "chatserver",
      resource_type: "server",
      project_id: alpha.id,
      external_resource_id: TEST_GUILD.id,
      display_name: "Test Server",
    });
    const connection = await env.DB.prepare("SELECT * FROM plugin_oauth_connections").first<any>();
    expect(connection).toMatchObject({
      plugin_id: "chatserver",
      project_id: alpha.id,
      external_user_id: TEST_GUILD.id,
    });
    expect(connection.access_token).toMatch(/^v1\./);

    const code = await sessionCode(alpha.id);
    expect((await w.call(new Request(`${PLUGIN}/install?code=${code}`))).status).toBe(302);
    const again = await w.call(new Request(`${PLUGIN}/install?code=${code}`));
    expect(again.status).toBe(410);
    expect(await again.text()).toContain("already used");
    expect((await w.call(new Request(`${PLUGIN}/install?code=${"0".repeat(64)}`))).status).toBe(404);
    expect(
      (await w.call(new Request(`${PLUGIN}/install?code=${await sessionCode(alpha.id, "workspace")}`))).status,
    ).toBe(400);
  });

  it("a bad or missing state is refused and nothing is exchanged or stored", async () => {
    const w = world();
    for (const q of ["code=abc&state=forged", "code=abc", "code=abc&state=" + "x".repeat(40)]) {
      const res = await w.call(new Request(`${PLUGIN}/oauth/callback?${q}`));
      expect(res.status).toBe(400);
      expect(await res.text()).toContain("Install refused");
    }
    expect(w.fake.recorded().filter((r) => r.path.includes("token"))).toHaveLength(0);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM plugin_resources").first("n")).toBe(0);
  });

  it("a callback in another browser (without the install cookie) is refused before the code is exchanged", async () => {
    const w = world();
    const res = await install(w, alpha.id, TEST_GUILD.id, { cookie: false });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("another browser");
    expect(w.fake.recorded().filter((r) => r.path.includes("token"))).toHaveLength(0);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM plugin_resources").first("n")).toBe(0);
  });

  it("Cancel at the consent page installs nothing", async () => {
    const w = world();
    const start = await w.call(new Request(`${PLUGIN}/install?code=${await sessionCode(alpha.id)}`));
    const q = new URL(start.headers.get("location")!).searchParams;
    const form = new URLSearchParams({
      client_id: APP,
      redirect_uri: q.get("redirect_uri")!,
      state: q.get("state")!,
      action: "cancel",
    });
    const back = await w.fakeCall("/oauth2/authorize", { method: "POST", body: form, redirect: "manual" });
    const res = await w.call(new Request(back.headers.get("location")!, { headers: { cookie: browserCookie(start) } }));
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("cancelled");
    expect(res.headers.get("set-cookie")).toContain("Max-Age=0");
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM plugin_oauth_connections").first("n")).toBe(0);
  });

  it("a server claimed by another project is refused with 409 and nothing changes; the owner may re-install", async () => {
    const w = world();
    expect((await install(w, alpha.id)).status).toBe(200);
    const refused = await install(w, beta.id);
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain("already connected to another project");
    expect(await env.DB.prepare("SELECT project_id FROM plugin_resources").first("project_id")).toBe(alpha.id);
    expect(
      await env.DB.prepare("SELECT COUNT(*) AS n FROM plugin_oauth_connections WHERE project_id = ?")
        .bind(beta.id)
        .first("n"),
    ).toBe(0);
    expect((await install(w, alpha.id)).status).toBe(200);
  });
});

describe("starting the Gateway relay", () => {
  /** A GATEWAY_RELAY namespace that records which relay was asked to start, for which shard. */
  function relayStub(w: World, shards?: string, problem: RelayProblem | null = null) {
    const pokes: [string, unknown][] = [];
    Object.assign(w.env, {
      CHATSERVER_GATEWAY_SHARDS: shards,
      GATEWAY_RELAY: {
        idFromName: (name: string) => name,
        get: (name: string) => ({
          start: async (shard: unknown) => {
            pokes.push([name, shard]);
            return problem
              ? { phase: "stopped", connected: false, problem }
              : { phase: "connecting", connected: false };
          },
        }),
      },
    });
    return pokes;
  }

  it("a completed install starts it; a refused one does not", async () => {
    const w = world();
    const pokes = relayStub(w);
    expect((await install(w, alpha.id)).status).toBe(200);
    expect(pokes).toEqual([["shard-0-of-1", [0, 1]]]);
    expect((await install(w, beta.id)).status).toBe(409);
    expect(pokes).toHaveLength(1);
  });

  it("a deploy starts every shard's relay; a refused deploy none", async () => {
    const w = world();
    const pokes = relayStub(w, "2");
    const body = JSON.stringify({ commands: ["hello"] });
    expect((await w.call(await signedRequest({ project: alpha, path: "/deploy", body, origin: PLUGIN }))).status).toBe(
      200,
    );
    expect(pokes).toEqual([
      ["shard-0-of-2", [0, 2]],
      ["shard-1-of-2", [1, 2]],
    ]);
    const forged = await signedRequest({
      project: alpha,
      path: "/deploy",
      body,
      secret: "f".repeat(64),
      origin: PLUGIN,
    });
    expect((await w.call(forged)).status).toBe(401);
    expect(pokes).toHaveLength(2);
  });

  it("POST /gateway/start answers each shard's phase (no binding: no shards)", async () => {
    const bare = world();
    const none = await bare.call(new Request(`${PLUGIN}/gateway/start`, { method: "POST" }));
    expect(await none.json()).toEqual({ shards: [] });
    const w = world();
    relayStub(w);
    const res = await w.call(new Request(`${PLUGIN}/gateway/start`, { method: "POST" }));
    expect(await res.json()).toEqual({ shards: [{ phase: "connecting", connected: false, problem: null }] });
    const stopped = world();
    const problem = problemForClose(4014, "Disallowed intent(s).");
    relayStub(stopped, undefined, problem);
    const told = await stopped.call(new Request(`${PLUGIN}/gateway/start`, { method: "POST" }));
    expect(await told.json()).toEqual({ shards: [{ phase: "stopped", connected: false, problem }] });
  });
});

describe("POST /deploy", () => {
  it("registers the project's commands on every server it claimed, with the bot token", async () => {
    const w = world();
    await install(w, alpha.id);
    await install(w, alpha.id, OTHER_GUILD.id);
    const body = JSON.stringify({
      plugins: {
        chatserver: { commands: [{ name: "hello", description: "Say hello" }, { name: "ping" }], events: ["message"] },
      },
    });
    const res = await w.call(await signedRequest({ project: alpha, path: "/deploy", body, origin: PLUGIN }));
    expect(res.status, await res.clone().text()).toBe(200);
    expect(((await res.json()) as any).servers.map((s: any) => s.id).sort()).toEqual(
      [TEST_GUILD.id, OTHER_GUILD.id].sort(),
    );
    const puts = w.fake.recorded().filter((r) => r.method === "PUT");
    expect(puts).toHaveLength(2);
    expect(puts.every((p) => p.auth === "Bot bot-token" && p.status === 200)).toBe(true);
    const state = (await (await w.fakeCall("/__fake/state")).json()) as any;
    expect(state.commands[TEST_GUILD.id].map((c: any) => c.name)).toEqual(["hello", "ping"]);
  });

  it("a deploy that changes nothing makes no call; a changed set or a re-install registers again", async () => {
    const w = world();
    await install(w, alpha.id);
    const deploy = async (commands: unknown[]) => {
      const res = await w.call(
        await signedRequest({ project: alpha, path: "/deploy", body: JSON.stringify({ commands }), origin: PLUGIN }),
      );
      expect(res.status, await res.clone().text()).toBe(200);
      return ((await res.json()) as any).servers[0].changed as boolean;
    };
    const puts = () => w.fake.recorded().filter((r) => r.method === "PUT").length;
    expect(await deploy(["hello"])).toBe(true);
    expect(await deploy(["hello"])).toBe(false);
    expect(puts()).toBe(1);
    expect(await deploy(["hello", "ping"])).toBe(true);
    expect(await deploy([])).toBe(true); // dropping every command clears them at the chat server
    expect(((await (await w.fakeCall("/__fake/state")).json()) as any).commands[TEST_GUILD.id]).toEqual([]);
    await install(w, alpha.id);
    expect(await deploy([])).toBe(true);
    expect(puts()).toBe(4);
  });

  it("refuses a bad identity token and invalid command names", async () => {
    const w = world();
    const body = JSON.stringify({ commands: ["hello"] });
    expect(
      (
        await w.call(
          await signedRequest({ project: alpha, path: "/deploy", body, secret: "f".repeat(64), origin: PLUGIN }),
        )
      ).status,
    ).toBe(401);
    expect(
      (
        await w.call(
          await signedRequest({
            project: alpha,
            path: "/deploy",
            body: JSON.stringify({ commands: ["Bad Name"] }),
            origin: PLUGIN,
          }),
        )
      ).status,
    ).toBe(400);
  });
});

describe("proxy routes", () => {
  async function commandFor(w: World) {
    await w.fakeCall("/__fake/trigger", {
      method: "POST",
      body: JSON.stringify({ kind: "command", guildId: TEST_GUILD.id, name: "hello" }),
    });
    await w.settle();
    return JSON.parse(w.dispatcher.calls.at(-1)!.body) as { replyToken: string };
  }

  it("reply edits the deferred answer at the fake; followup adds one; another project cannot use the token", async () => {
    const w = world();
    await install(w, alpha.id);
    const { replyToken } = await commandFor(w);
    const interaction = [...w.fake.state().interactions.values()][0]!;
    expect(interaction.acknowledged).toBe(true); // by the plugin's inline type 5
    const reply = await w.call(
      await signedRequest({
        project: alpha,
        path: "/proxy/reply",
        body: JSON.stringify({ replyToken, content: "Hello!" }),
        origin: PLUGIN,
      }),
    );
    expect(reply.status, await reply.clone().text()).toBe(200);
    expect(w.fake.recorded().at(-1)).toMatchObject({
      method: "PATCH",
      path: `/api/v10/webhooks/${APP}/${interaction.token}/messages/@original`,
      status: 200,
      body: { content: "Hello!" },
    });
    const followup = await w.call(
      await signedRequest({
        project: alpha,
        path: "/proxy/followup",
        body: JSON.stringify({ replyToken, content: "More" }),
        origin: PLUGIN,
      }),
    );
    expect(followup.status).toBe(200);
    const stolen = await w.call(
      await signedRequest({
        project: beta,
        path: "/proxy/reply",
        body: JSON.stringify({ replyToken, content: "x" }),
        origin: PLUGIN,
      }),
    );
    expect(stolen.status).toBe(400);
    // Two actions used; the third passes, the fourth within the minute is refused before reaching the chat server.
    const third = await w.call(
      await signedRequest({
        project: alpha,
        path: "/proxy/reply",
        body: JSON.stringify({ replyToken, content: "Third" }),
        origin: PLUGIN,
      }),
    );
    expect(third.status).toBe(200);
    const calls = w.fake.recorded().length;
    const fourth = await w.call(
      await signedRequest({
        project: alpha,
        path: "/proxy/reply",
        body: JSON.stringify({ replyToken, content: "Fourth" }),
        origin: PLUGIN,
      }),
    );
    expect(fourth.status).toBe(429);
    expect(Number(fourth.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(w.fake.recorded().length).toBe(calls);
  });

  it("send-message reaches the fake; a channel outside the project's servers is refused; the 4th action in a minute is 429 with Retry-After", async () => {
    const w = world();
    await install(w, alpha.id);
    const sendReq = async (project: ProjectRow, channelId: string) =>
      w.call(
        await signedRequest({
          project,
          path: "/proxy/send-message",
          body: JSON.stringify({ channelId, content: "hi" }),
          origin: PLUGIN,
        }),
      );
    const first = await sendReq(alpha, TEST_GUILD.channels[0]!);
    expect(first.status, await first.clone().text()).toBe(200);
    const { messageId } = (await first.json()) as { messageId: string };
    const edit = await w.call(
      await signedRequest({
        project: alpha,
        path: "/proxy/edit-message",
        body: JSON.stringify({ channelId: TEST_GUILD.channels[0], messageId, content: "edited" }),
        origin: PLUGIN,
      }),
    );
    expect(edit.status, await edit.clone().text()).toBe(200);
    const foreign = await sendReq(beta, TEST_GUILD.channels[0]!);
    expect(foreign.status).toBe(403);
    expect((await sendReq(alpha, TEST_GUILD.channels[0]!)).status).toBe(200);
    const limited = await sendReq(alpha, TEST_GUILD.channels[0]!);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(((await limited.json()) as any).error.code).toBe("rate_limited");
    expect(w.fake.recorded().filter((r) => r.method === "POST" && r.path.endsWith("/messages"))).toHaveLength(2);
  });

  it("the chat server's own 429 comes back as rate_limited with its Retry-After", async () => {
    const w = world();
    await install(w, alpha.id);
    await w.fakeCall("/__fake/rate-limit", { method: "POST", body: JSON.stringify({ count: 1, retryAfter: 7 }) });
    const res = await w.call(
      await signedRequest({
        project: alpha,
        path: "/proxy/send-message",
        body: JSON.stringify({ channelId: TEST_GUILD.channels[0], content: "hi" }),
        origin: PLUGIN,
      }),
    );
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("7");
  });
});

describe("commands registered at install", () => {
  it("a server installed after the last deploy has the project's commands when the page says connected, and the page lists them", async () => {
    const w = world();
    await deploy(w, alpha, [{ name: "hello", description: "Say hello" }, "ping"]); // no server yet
    expect(w.fake.recorded().filter((r) => r.method === "PUT")).toHaveLength(0);
    const page = await install(w, alpha.id);
    // Registered before the answer: the fake recorded it by the time the page arrived.
    expect(await commandsIn(w, TEST_GUILD.id)).toEqual(["hello", "ping"]);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("connected");
    expect(html).toContain("Commands registered: /hello, /ping.");
    // The next deploy with the same commands changes nothing there.
    await deploy(w, alpha, [{ name: "hello", description: "Say hello" }, "ping"]);
    expect(w.fake.recorded().filter((r) => r.method === "PUT")).toHaveLength(1);
  });

  it("before any deploy the page says the commands come with the first deploy; another project's manifest is not used", async () => {
    const w = world();
    await deploy(w, beta, ["beta-only"]);
    const page = await install(w, alpha.id);
    expect(await page.text()).toContain("has not deployed yet");
    expect(await commandsIn(w, TEST_GUILD.id)).toEqual([]);
  });
});

describe("POST /uninstall", () => {
  it("removes the bot's commands from every server, deletes the connection and releases the servers: another project installs there", async () => {
    const w = world();
    await deploy(w, alpha, ["hello"]);
    await install(w, alpha.id);
    await install(w, alpha.id, OTHER_GUILD.id);
    expect((await install(w, beta.id)).status).toBe(409);
    const res = await w.call(await signedRequest({ project: alpha, path: "/uninstall", body: "{}", origin: PLUGIN }));
    expect(res.status, await res.clone().text()).toBe(200);
    const report = (await res.json()) as any;
    expect(report.connectionDeleted).toBe(true);
    expect(report.released.map((r: any) => r.externalId).sort()).toEqual([TEST_GUILD.id, OTHER_GUILD.id].sort());
    expect(report.atProvider.filter((s: string) => s.startsWith("Removed the bot's commands"))).toHaveLength(2);
    expect(await commandsIn(w, TEST_GUILD.id)).toEqual([]);
    expect(await commandsIn(w, OTHER_GUILD.id)).toEqual([]);
    expect(
      await env.DB.prepare("SELECT COUNT(*) AS n FROM plugin_oauth_connections WHERE project_id = ?")
        .bind(alpha.id)
        .first("n"),
    ).toBe(0);
    expect((await install(w, beta.id)).status).toBe(200);
  });

  it("refuses a forged token; a project with nothing installed gets 404", async () => {
    const w = world();
    await install(w, alpha.id);
    const forged = await signedRequest({ project: alpha, path: "/uninstall", body: "{}", origin: PLUGIN, secret: "x" });
    expect((await w.call(forged)).status).toBe(401);
    const nothing = await w.call(
      await signedRequest({ project: beta, path: "/uninstall", body: "{}", origin: PLUGIN }),
    );
    expect(nothing.status).toBe(404);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM plugin_resources").first("n")).toBe(1);
  });
});

async function deploy(w: World, project: ProjectRow, commands: unknown[]): Promise<void> {
  const res = await w.call(
    await signedRequest({ project, path: "/deploy", body: JSON.stringify({ commands }), origin: PLUGIN }),
  );
  expect(res.status, await res.clone().text()).toBe(200);
}

async function commandsIn(w: World, guildId: string): Promise<string[]> {
  return (((await (await w.fakeCall("/__fake/state")).json()) as any).commands[guildId] ?? []).map((c: any) => c.name);
}

describe("connection health", () => {
  it("the chat server refuses the bot token (401): the call fails and the connection needs reconnecting with the error; a success clears it", async () => {
    const w = world();
    await install(w, alpha.id);
    const send = async () =>
      w.call(
        await signedRequest({
          project: alpha,
          path: "/proxy/send-message",
          body: JSON.stringify({ channelId: TEST_GUILD.channels[0], content: "hi" }),
          origin: PLUGIN,
        }),
      );
    const health = () =>
      env.DB.prepare("SELECT last_error, last_error_at FROM plugin_oauth_connections WHERE project_id = ?")
        .bind(alpha.id)
        .first<{ last_error: string | null; last_error_at: number | null }>();
    const goodToken = w.env.CHATSERVER_BOT_TOKEN;
    w.env.CHATSERVER_BOT_TOKEN = "a-token-the-chat-server-revoked";
    expect((await send()).status).toBe(502);
    expect(await health()).toMatchObject({ last_error: "401 401: Unauthorized", last_error_at: expect.any(Number) });
    w.env.CHATSERVER_BOT_TOKEN = goodToken;
    expect((await send()).status).toBe(200);
    expect(await health()).toEqual({ last_error: null, last_error_at: null });
  });
});
