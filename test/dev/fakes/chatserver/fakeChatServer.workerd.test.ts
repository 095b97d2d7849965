// The fake chat server checks what it receives (OAuth, REST, signatures):
// a fake that accepts anything proves nothing.
import { describe, expect, it } from "vitest";
import {
  createFakeChatServer,
  OTHER_GUILD,
  TEST_GUILD,
  type FakeChatServerConfig,
} from "#src/dev/fakes/chatserver/fakeChatServer.ts";
import fakeChatServerWorker, { fakeFromEnv, type FakeChatServerEnv } from "#src/dev/fakes/chatserver/index.ts";
import { ed25519PublicKeyHex, verifyEd25519Webhook } from "#src/core/crypto/ed25519.ts";
import { IDENTIFY_WINDOW_MS, RELAY_INTENTS } from "#src/plugins/chatserver/gatewayRelay/gatewayProtocol.ts";
import type { PlatformError } from "#src/core/errors.ts";
import { callChatServer } from "#src/plugins/chatserver/chatServerApi.ts";
import type { ChatServerEnv } from "#src/plugins/chatserver/env.ts";
import { flushSockets, manualClock } from "#test/support/workerd/index.ts";

const FAKE = "https://discord.fake";
const SEED = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
const REDIRECT = "https://chatserver.plugin.test/oauth/callback";

function setup(overrides: Partial<FakeChatServerConfig> = {}) {
  const delivered: Request[] = [];
  const fake = createFakeChatServer({
    baseUrl: FAKE,
    applicationId: "900000000000000001",
    clientId: "900000000000000001",
    clientSecret: "client-secret",
    botToken: "bot-token",
    signingSeed: SEED,
    webhookUrl: "https://chatserver.plugin.test/webhook",
    redirectUris: [REDIRECT],
    deliver: async (request) => {
      delivered.push(request);
      // Answer the way that leaves the interaction open (Discord's "202 and respond by callback").
      return new Response(null, { status: 202 });
    },
    ...overrides,
  });
  const call = (path: string, init?: RequestInit) => fake.fetch(new Request(FAKE + path, init));
  return { fake, call, delivered };
}

async function approve(call: ReturnType<typeof setup>["call"], action = "approve") {
  const page = await call(
    `/oauth2/authorize?client_id=900000000000000001&response_type=code&scope=bot%20applications.commands&permissions=2048&redirect_uri=${encodeURIComponent(REDIRECT)}&state=st-1`,
  );
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toContain("Test Server");
  expect(html).toContain(TEST_GUILD.id);
  const form = new URLSearchParams({
    client_id: "900000000000000001",
    redirect_uri: REDIRECT,
    state: "st-1",
    scope: "bot applications.commands",
    permissions: "2048",
    guild_id: TEST_GUILD.id,
    action,
  });
  const answer = await call("/oauth2/authorize", { method: "POST", body: form, redirect: "manual" });
  expect(answer.status).toBe(302);
  return new URL(answer.headers.get("location")!);
}

const tokenRequest = (fields: Record<string, string>, basic = true) =>
  ({
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      ...(basic ? { authorization: "Basic " + btoa("900000000000000001:client-secret") } : {}),
    },
    body: new URLSearchParams(fields).toString(),
  }) satisfies RequestInit;

describe("fake chat server: OAuth2 bot install", () => {
  it("Approve redirects with code, state and guild_id; the code is exchanged once for tokens and the guild", async () => {
    const { call } = setup();
    const back = await approve(call);
    expect(back.origin + back.pathname).toBe(REDIRECT);
    expect(back.searchParams.get("state")).toBe("st-1");
    expect(back.searchParams.get("guild_id")).toBe(TEST_GUILD.id);
    const code = back.searchParams.get("code")!;
    const first = await call(
      "/api/oauth2/token",
      tokenRequest({ grant_type: "authorization_code", code, redirect_uri: REDIRECT }),
    );
    expect(first.status).toBe(200);
    const tokens = (await first.json()) as Record<string, any>;
    expect(tokens).toMatchObject({
      token_type: "Bearer",
      expires_in: 604800,
      guild: { id: TEST_GUILD.id, name: "Test Server" },
    });
    expect(tokens.access_token).toBeTruthy();
    expect(tokens.refresh_token).toBeTruthy();
    const again = await call(
      "/api/oauth2/token",
      tokenRequest({ grant_type: "authorization_code", code, redirect_uri: REDIRECT }),
    );
    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({ error: "invalid_grant" });
  });

  it("client_secret_post works; a wrong secret, a JSON body or a different redirect_uri is refused", async () => {
    const { call } = setup();
    const code = (await approve(call)).searchParams.get("code")!;
    const wrongSecret = await call(
      "/api/oauth2/token",
      tokenRequest(
        {
          grant_type: "authorization_code",
          code,
          redirect_uri: REDIRECT,
          client_id: "900000000000000001",
          client_secret: "nope",
        },
        false,
      ),
    );
    expect(wrongSecret.status).toBe(401);
    const json = await call("/api/oauth2/token", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(json.status).toBe(400);
    const code2 = (await approve(call)).searchParams.get("code")!;
    const wrongRedirect = await call(
      "/api/oauth2/token",
      tokenRequest({ grant_type: "authorization_code", code: code2, redirect_uri: REDIRECT + "x" }),
    );
    expect(await wrongRedirect.json()).toMatchObject({ error: "invalid_grant" });
    const code3 = (await approve(call)).searchParams.get("code")!;
    const post = await call(
      "/api/oauth2/token",
      tokenRequest(
        {
          grant_type: "authorization_code",
          code: code3,
          redirect_uri: REDIRECT,
          client_id: "900000000000000001",
          client_secret: "client-secret",
        },
        false,
      ),
    );
    expect(post.status).toBe(200);
  });

  it("Cancel redirects with error=access_denied and the state; an unregistered redirect_uri gets no redirect", async () => {
    const { call } = setup();
    const back = await approve(call, "cancel");
    expect(back.searchParams.get("error")).toBe("access_denied");
    expect(back.searchParams.get("state")).toBe("st-1");
    expect(back.searchParams.get("code")).toBeNull();
    const bad = await call(
      `/oauth2/authorize?client_id=900000000000000001&response_type=code&scope=bot%20applications.commands&redirect_uri=${encodeURIComponent("https://evil.test/cb")}`,
    );
    expect(bad.status).toBe(400);
  });
});

describe("fake chat server: REST", () => {
  const json = (method: string, body: unknown, auth?: string): RequestInit => ({
    method,
    headers: { "content-type": "application/json", ...(auth ? { authorization: auth } : {}) },
    body: JSON.stringify(body),
  });

  it("bulk-overwrites guild commands with the bot token only, for an installed guild, with valid commands", async () => {
    const { call } = setup();
    const path = `/api/v10/applications/900000000000000001/guilds/${TEST_GUILD.id}/commands`;
    const cmds = [{ name: "hello", description: "Say hello", type: 1 }];
    expect((await call(path, json("PUT", cmds, "Bot bot-token"))).status).toBe(403); // not installed yet
    await approve(call);
    expect((await call(path, json("PUT", cmds, "Bot wrong"))).status).toBe(401);
    expect((await call(path, json("PUT", cmds))).status).toBe(401);
    expect((await call(path, json("PUT", [{ name: "Bad Name", description: "x" }], "Bot bot-token"))).status).toBe(400);
    expect((await call(path, { method: "PUT", headers: { authorization: "Bot bot-token" }, body: "[]" })).status).toBe(
      400,
    );
    const ok = await call(path, json("PUT", cmds, "Bot bot-token"));
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject([{ name: "hello", guild_id: TEST_GUILD.id }]);
  });

  it("answers 429 with Retry-After when the test switch asks, then serves again", async () => {
    const { call } = setup();
    await approve(call);
    await call("/__fake/rate-limit", json("POST", { count: 1, retryAfter: 2 }));
    const path = `/api/v10/channels/${TEST_GUILD.channels[0]}/messages`;
    const limited = await call(path, json("POST", { content: "hi" }, "Bot bot-token"));
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("2");
    expect(await limited.json()).toMatchObject({ retry_after: 2, global: false });
    const sent = await call(path, json("POST", { content: "hi" }, "Bot bot-token"));
    expect(sent.status).toBe(200);
    const message = (await sent.json()) as { id: string };
    const edited = await call(`${path}/${message.id}`, json("PATCH", { content: "edited" }, "Bot bot-token"));
    expect(await edited.json()).toMatchObject({ content: "edited" });
    expect(
      (await call(`/api/v10/channels/999/messages`, json("POST", { content: "hi" }, "Bot bot-token"))).status,
    ).toBe(404);
    const recorded = (await (await call("/__fake/recorded")).json()) as { path: string; status: number }[];
    expect(recorded.map((r) => r.status)).toContain(429);
  });

  it("trigger takes the server as resourceId too (what the test-event route sends)", async () => {
    const { call } = setup();
    const res = await call(
      "/__fake/trigger",
      json("POST", { kind: "command", resourceId: OTHER_GUILD.id, name: "hi" }),
    );
    expect(res.status).toBe(200);
    expect(((await res.json()) as { payload: { guild_id: string } }).payload.guild_id).toBe(OTHER_GUILD.id);
  });

  it("trigger signs a command the verifier accepts; callback, @original and followups need the live interaction token", async () => {
    const { call, delivered } = setup();
    const res = await call(
      "/__fake/trigger",
      json("POST", { kind: "command", guildId: TEST_GUILD.id, name: "hello", text: "hi" }),
    );
    expect(res.status).toBe(200);
    const out = (await res.json()) as { payload: any; status: number; body: unknown };
    expect(out).toMatchObject({ status: 202, body: null });
    const request = delivered[0]!;
    const raw = await request.text();
    const check = await verifyEd25519Webhook(
      await ed25519PublicKeyHex(SEED),
      request.headers.get("x-signature-ed25519"),
      request.headers.get("x-signature-timestamp"),
      raw,
    );
    expect(check).toEqual({ ok: true });
    const { id, token } = out.payload;
    expect(out.payload).toMatchObject({
      type: 2,
      guild_id: TEST_GUILD.id,
      data: { name: "hello", options: [{ name: "text", value: "hi" }] },
    });
    expect(
      (await call(`/api/v10/webhooks/900000000000000001/${token}`, json("POST", { content: "early" }))).status,
    ).toBe(404);
    expect((await call(`/api/v10/interactions/${id}/wrong/callback`, json("POST", { type: 5 }))).status).toBe(404);
    expect((await call(`/api/v10/interactions/${id}/${token}/callback`, json("POST", { type: 5 }))).status).toBe(204);
    expect((await call(`/api/v10/interactions/${id}/${token}/callback`, json("POST", { type: 5 }))).status).toBe(400);
    expect(
      (
        await call(
          `/api/v10/webhooks/900000000000000001/${token}/messages/@original`,
          json("PATCH", { content: "done" }),
        )
      ).status,
    ).toBe(200);
    expect(
      (await call(`/api/v10/webhooks/900000000000000001/${token}`, json("POST", { content: "more" }))).status,
    ).toBe(200);
    expect(
      (await call(`/api/v10/webhooks/900000000000000001/not-a-token`, json("POST", { content: "more" }))).status,
    ).toBe(401);
  });
});

// The plugin's own REST client (chatServerApi.ts) against the fake, asserting the provider's documented answers
// (resources/message.mdx, interactions/receiving-and-responding.mdx, interactions/application-commands.mdx).
describe("fake chat server: REST answers as the provider's", () => {
  async function installed() {
    const world = setup();
    await approve(world.call);
    const env = {
      CHATSERVER_BASE_URL: FAKE,
      CHATSERVER_BOT_TOKEN: "bot-token",
      CHATSERVER_FETCH: { fetch: (r: Request) => world.fake.fetch(r) },
    } as unknown as ChatServerEnv;
    const bot = <T = any>(method: string, path: string, body?: unknown) =>
      callChatServer<T>(env, method, path, body, "bot");
    const webhook = <T = any>(method: string, path: string, body?: unknown) =>
      callChatServer<T>(env, method, path, body, "none");
    return { ...world, bot, webhook };
  }
  const channel = `/channels/${TEST_GUILD.channels[0]}/messages`;
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => null,
      (error: PlatformError) => ({ status: error.details?.status, code: error.details?.providerCode }),
    );

  it("GET and DELETE of a message: the message, then 204, then 404 10008 Unknown Message", async () => {
    const { bot } = await installed();
    const sent = await bot<{ id: string }>("POST", channel, { content: "to delete" });
    expect(await bot("GET", `${channel}/${sent.id}`)).toMatchObject({ id: sent.id, content: "to delete" });
    expect(await bot("DELETE", `${channel}/${sent.id}`)).toBeNull();
    expect(await refusal(bot("GET", `${channel}/${sent.id}`))).toEqual({ status: 404, code: 10008 });
    expect(await refusal(bot("DELETE", `${channel}/${sent.id}`))).toEqual({ status: 404, code: 10008 });
  });

  it("a message of embeds only is sent; one with nothing at all is 50006; more than 10 embeds 50035", async () => {
    const { bot } = await installed();
    const sent = await bot("POST", channel, { embeds: [{ title: "Build passed", description: "all green" }] });
    expect(sent).toMatchObject({ content: "", embeds: [{ title: "Build passed" }] });
    expect(await refusal(bot("POST", channel, {}))).toEqual({ status: 400, code: 50006 });
    expect(await refusal(bot("POST", channel, { embeds: Array(11).fill({ title: "x" }) }))).toEqual({
      status: 400,
      code: 50035,
    });
    // An edit changes only what it names: the embeds stay.
    const edited = await bot("PATCH", `${channel}/${sent.id}`, { content: "now with text" });
    expect(edited).toMatchObject({ content: "now with text", embeds: [{ title: "Build passed" }] });
  });

  it("a multipart message (payload_json + files[0]) is sent with its attachment", async () => {
    const { call } = await installed();
    const form = new FormData();
    form.set("payload_json", JSON.stringify({ content: "the report" }));
    form.set("files[0]", new File(["a,b\n1,2\n"], "report.csv", { type: "text/csv" }));
    const sent = await call(`/api/v10${channel}`, {
      method: "POST",
      headers: { authorization: "Bot bot-token" },
      body: form,
    });
    expect(sent.status).toBe(200);
    expect(await sent.json()).toMatchObject({
      content: "the report",
      attachments: [{ filename: "report.csv", size: 8 }],
    });
    const fileOnly = new FormData();
    fileOnly.set("files[0]", new File(["x"], "x.txt"));
    const bare = await call(`/api/v10${channel}`, {
      method: "POST",
      headers: { authorization: "Bot bot-token" },
      body: fileOnly,
    });
    expect(bare.status).toBe(200);
  });

  it("@original, also spelled %40original, is read, edited and deleted; a followup too", async () => {
    const { call, webhook } = await installed();
    const triggered = await call("/__fake/trigger", {
      method: "POST",
      body: JSON.stringify({ kind: "command", guildId: TEST_GUILD.id, name: "hello" }),
    });
    const { id, token } = ((await triggered.json()) as { payload: { id: string; token: string } }).payload;
    await webhook("POST", `/interactions/${id}/${token}/callback`, { type: 5 });
    const original = `/webhooks/900000000000000001/${token}/messages/%40original`;
    expect(await webhook("PATCH", original, { content: "done" })).toMatchObject({ content: "done" });
    expect(await webhook("GET", original)).toMatchObject({ content: "done" });
    const followup = await webhook<{ id: string }>("POST", `/webhooks/900000000000000001/${token}`, {
      embeds: [{ title: "more" }],
    });
    const followupPath = `/webhooks/900000000000000001/${token}/messages/${followup.id}`;
    expect(await webhook("PATCH", followupPath, { content: "more, edited" })).toMatchObject({
      content: "more, edited",
      embeds: [{ title: "more" }],
    });
    expect(await webhook("DELETE", followupPath)).toBeNull();
    expect(await webhook("DELETE", original)).toBeNull();
    expect(await refusal(webhook("GET", original))).toEqual({ status: 404, code: 10008 });
  });

  it("one guild command is created (201), or overwritten by name (200); read, edited, deleted", async () => {
    const { bot } = await installed();
    const path = `/applications/900000000000000001/guilds/${TEST_GUILD.id}/commands`;
    const created = await bot<{ id: string }>("POST", path, { name: "ping", description: "Ping", type: 1 });
    expect(created).toMatchObject({ name: "ping", guild_id: TEST_GUILD.id });
    const again = await bot<{ id: string; description: string }>("POST", path, { name: "ping", description: "Pong?" });
    expect(again).toMatchObject({ id: created.id, description: "Pong?" });
    expect(await bot("GET", `${path}/${created.id}`)).toMatchObject({ name: "ping" });
    expect(await bot("PATCH", `${path}/${created.id}`, { description: "Edited" })).toMatchObject({
      description: "Edited",
    });
    expect(await refusal(bot("POST", path, { name: "Bad Name", description: "x" }))).toEqual({
      status: 400,
      code: 50035,
    });
    expect(await bot("DELETE", `${path}/${created.id}`)).toBeNull();
    expect(await bot("GET", path)).toEqual([]);
    expect(await refusal(bot("GET", `${path}/${created.id}`))).toEqual({ status: 404, code: 10063 });
  });

  it("the status of a single create: 201 for a new command, 200 for an overwrite", async () => {
    const { call } = await installed();
    const path = `/api/v10/applications/900000000000000001/guilds/${TEST_GUILD.id}/commands`;
    const create = () =>
      call(path, {
        method: "POST",
        headers: { authorization: "Bot bot-token", "content-type": "application/json" },
        body: JSON.stringify({ name: "ping", description: "Ping" }),
      });
    expect((await create()).status).toBe(201);
    expect((await create()).status).toBe(200);
  });

  it("global commands: bulk overwrite, list, create one", async () => {
    const { bot } = await installed();
    const path = "/applications/900000000000000001/commands";
    expect(await bot("PUT", path, [{ name: "help", description: "Help" }])).toMatchObject([{ name: "help" }]);
    expect(await bot("POST", path, { name: "about", description: "About" })).toMatchObject({ name: "about" });
    expect(((await bot("GET", path)) as { name: string }[]).map((c) => c.name)).toEqual(["help", "about"]);
    expect(await refusal(bot("GET", "/applications/900000000000000009/commands"))).toEqual({
      status: 403,
      code: 50001,
    });
  });
});

describe("fake chat server as a worker (configured by vars)", () => {
  const workerEnv = (received: Request[]): FakeChatServerEnv => ({
    FAKE_BASE_URL: FAKE,
    CHATSERVER_APPLICATION_ID: "900000000000000002",
    CHATSERVER_CLIENT_ID: "900000000000000002",
    CHATSERVER_CLIENT_SECRET: "s",
    CHATSERVER_BOT_TOKEN: "b",
    CHATSERVER_SIGNING_SEED: SEED,
    CHATSERVER_WEBHOOK_URL: "https://plugin.local/webhook",
    CHATSERVER_REDIRECT_URIS: "https://plugin.local/oauth/callback",
    CHATSERVER_GATEWAY_HEARTBEAT_MS: "200",
    PLUGIN: {
      fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
        received.push(new Request(input, init));
        return Response.json({ type: 5 });
      },
    } as unknown as Fetcher,
    FAKE_STATE: null as unknown as FakeChatServerEnv["FAKE_STATE"],
  });

  it("serves the consent page for its client id, signs command triggers with its seed and delivers through the PLUGIN binding", async () => {
    const received: Request[] = [];
    const fake = fakeFromEnv(workerEnv(received));
    const call = (path: string, init?: RequestInit) => fake.fetch(new Request(FAKE + path, init));
    const page = await call(
      `/oauth2/authorize?client_id=900000000000000002&response_type=code&scope=bot%20applications.commands&redirect_uri=${encodeURIComponent("https://plugin.local/oauth/callback")}`,
    );
    expect(page.status).toBe(200);
    const wrongClient = await call(
      `/oauth2/authorize?client_id=900000000000000001&response_type=code&scope=bot%20applications.commands&redirect_uri=${encodeURIComponent("https://plugin.local/oauth/callback")}`,
    );
    expect(wrongClient.status).toBe(400);
    const trigger = await call("/__fake/trigger", {
      method: "POST",
      body: JSON.stringify({ kind: "command", guildId: TEST_GUILD.id, name: "hello" }),
    });
    expect(((await trigger.json()) as { status: number }).status).toBe(200);
    expect(received).toHaveLength(1);
    expect(received[0]!.url).toBe("https://plugin.local/webhook");
    const raw = await received[0]!.text();
    expect(JSON.parse(raw)).toMatchObject({ type: 2, application_id: "900000000000000002", data: { name: "hello" } });
    const check = await verifyEd25519Webhook(
      await ed25519PublicKeyHex(SEED),
      received[0]!.headers.get("x-signature-ed25519"),
      received[0]!.headers.get("x-signature-timestamp"),
      raw,
    );
    expect(check).toEqual({ ok: true });
    const gateway = await call("/__fake/gateway");
    expect(await gateway.json()).toMatchObject({ url: "wss://discord.fake/gateway", heartbeatIntervalMs: 200 });
    expect((await call("/__fake/trigger", { method: "POST", body: JSON.stringify({ kind: "typing" }) })).status).toBe(
      400,
    );
    expect((await call("/__fake/reset", { method: "POST" })).status).toBe(204);
  });

  it("the worker serves every request from its one FakeChatServerState actor", async () => {
    const names: string[] = [];
    const env = {
      ...workerEnv([]),
      FAKE_STATE: {
        idFromName: (name: string) => {
          names.push(name);
          return name;
        },
        get: () => ({ fetch: async (request: Request) => new Response(`actor saw ${new URL(request.url).pathname}`) }),
      } as unknown as FakeChatServerEnv["FAKE_STATE"],
    };
    const answer = await fakeChatServerWorker.fetch(new Request(`${FAKE}/gateway`), env);
    expect(await answer.text()).toBe("actor saw /gateway");
    expect(names).toEqual(["fake"]);
  });
});

describe("fake chat server: Gateway", () => {
  /** The fake on a clock the test moves (its heartbeat deadlines, the IDENTIFY window, the session start limit). */
  function gatewaySetup(overrides: Partial<FakeChatServerConfig> = {}) {
    const clock = manualClock(1_000_000);
    return { clock, ...setup({ now: clock.now, timers: clock.timers, gatewayHeartbeatMs: 200, ...overrides }) };
  }
  type Gateway = ReturnType<typeof gatewaySetup>;

  /** A client socket to the fake's Gateway and the frames it received. */
  async function connect(fake: Gateway["fake"], query = "?v=10&encoding=json") {
    const response = await fake.fetch(new Request(`${FAKE}/gateway${query}`, { headers: { Upgrade: "websocket" } }));
    const socket = response.webSocket;
    if (!socket) throw new Error(`no socket: HTTP ${response.status}`);
    socket.accept();
    const frames: any[] = [];
    const closes: number[] = [];
    socket.addEventListener("message", (e) => frames.push(JSON.parse(e.data as string)));
    socket.addEventListener("close", (e) => closes.push(e.code));
    await flushSockets();
    return {
      response,
      frames,
      closes,
      send: async (frame: unknown) => {
        socket.send(JSON.stringify(frame));
        await flushSockets();
      },
    };
  }
  const identify = (d: Record<string, unknown> = {}) => ({
    op: 2,
    d: { token: "bot-token", intents: RELAY_INTENTS, shard: [0, 1], properties: {}, ...d },
  });
  const post = (body: unknown = {}): RequestInit => ({ method: "POST", body: JSON.stringify(body) });
  const gatewayBot = async (call: Gateway["call"]) =>
    (await call("/api/v10/gateway/bot", { headers: { authorization: "Bot bot-token" } })).json() as Promise<any>;

  it("GET /api/v10/gateway/bot needs the bot token and names the Gateway URL, one shard and the start limit", async () => {
    const { call } = gatewaySetup();
    expect((await call("/api/v10/gateway/bot")).status).toBe(401);
    expect(await gatewayBot(call)).toEqual({
      url: "wss://discord.fake/gateway",
      shards: 1,
      session_start_limit: { total: 1000, remaining: 1000, reset_after: 86_400_000, max_concurrency: 1 },
    });
  });

  it.each([
    ["no upgrade header", { headers: {} }, 426],
    ["another API version", { query: "?v=9&encoding=json" }, 400],
    ["another encoding", { query: "?v=10&encoding=etf" }, 400],
  ] as const)("refuses a connection with %s", async (_name, options, status) => {
    const { fake } = gatewaySetup();
    const query = "query" in options ? options.query : "?v=10&encoding=json";
    const headers = "headers" in options ? options.headers : { Upgrade: "websocket" };
    const response = await fake.fetch(new Request(`${FAKE}/gateway${query}`, { headers }));
    expect(response.status).toBe(status);
  });

  it("HELLO with the heartbeat interval; IDENTIFY → READY; heartbeats ACKed; events carry increasing sequences", async () => {
    const { fake, call } = gatewaySetup();
    const client = await connect(fake);
    expect(client.response.status).toBe(101);
    expect(client.frames).toEqual([{ op: 10, d: { heartbeat_interval: 200 } }]);
    await client.send(identify());
    const ready = client.frames[1];
    expect(ready).toMatchObject({
      op: 0,
      t: "READY",
      s: 1,
      d: { session_id: expect.any(String), resume_gateway_url: "wss://discord.fake/gateway" },
    });
    await client.send({ op: 1, d: 1 });
    await call("/__fake/trigger", post({ kind: "message", text: "hi" }));
    await call("/__fake/trigger", post({ kind: "reaction", text: "👍" }));
    await flushSockets();
    expect(client.frames.slice(2).map((f) => [f.op, f.t ?? null, f.s ?? null])).toEqual([
      [11, null, null],
      [0, "MESSAGE_CREATE", 2],
      [0, "MESSAGE_REACTION_ADD", 3],
    ]);
    expect(client.frames[3].d).toMatchObject({
      content: "hi",
      guild_id: TEST_GUILD.id,
      author: { username: "tester" },
    });
  });

  // What the provider closes with (opcodes-and-status-codes.mdx, gateway.mdx "Gateway Intents", "Sharding").
  it.each([
    ["IDENTIFY with a wrong token", 4004, [identify({ token: "stolen" })]],
    ["IDENTIFY twice", 4005, [identify(), identify()]],
    ["a payload before IDENTIFY", 4003, [{ op: 3, d: { since: null, activities: [], status: "online", afk: false } }]],
    ["an unknown opcode", 4001, [identify(), { op: 42 }]],
    ["a frame that is no payload (a JSON string)", 4002, ["not a payload"]],
    ["intents with a bit no intent has (1 << 30)", 4013, [identify({ intents: 1 << 30 })]],
    ["intents that are not a number", 4013, [identify({ intents: "all" })]],
    ["shard [5, 2]", 4010, [identify({ shard: [5, 2] })]],
    ["shard [0, 0]", 4010, [identify({ shard: [0, 0] })]],
    ["a privileged intent not enabled for the bot (GUILD_MEMBERS)", 4014, [identify({ intents: 1 << 1 })]],
    ["a presence update (op 3) that is not one", 4001, [identify(), { op: 3, d: { status: "busy" } }]],
  ] as const)("%s closes with %i", async (_name, code, frames) => {
    const { fake } = gatewaySetup();
    const client = await connect(fake);
    for (const frame of frames) await client.send(frame);
    expect(client.closes).toEqual([code]);
    // Only a first, valid IDENTIFY got READY: never the one refused.
    expect(client.frames.filter((f) => f.t === "READY").length).toBe(frames.length === 1 ? 0 : 1);
  });

  it("MESSAGE_CONTENT switched off at the portal: an IDENTIFY asking for it is closed 4014; switched on, READY", async () => {
    const { fake, call } = gatewaySetup();
    const off = await call("/__fake/gateway/privileged-intents", post({ enabled: [] }));
    expect(off.status).toBe(204);
    const refused = await connect(fake);
    await refused.send(identify());
    expect(refused.closes).toEqual([4014]);
    expect((await call("/__fake/gateway/privileged-intents", post({ enabled: ["GUILDS"] }))).status).toBe(400);
    await call("/__fake/gateway/privileged-intents", post({ enabled: ["MESSAGE_CONTENT"] }));
    const accepted = await connect(fake);
    await accepted.send(identify());
    expect(accepted.frames[1]).toMatchObject({ t: "READY" });
  });

  it("a presence update (op 3) is accepted on an identified connection", async () => {
    const { fake } = gatewaySetup();
    const client = await connect(fake);
    await client.send(identify());
    await client.send({
      op: 3,
      d: { since: null, activities: [{ name: "tests", type: 0 }], status: "idle", afk: false },
    });
    expect(client.closes).toEqual([]);
    expect(fake.gateway.state().events.at(-1)).toMatchObject({ kind: "presence", status: "idle" });
  });

  it("RESUME replays what the session missed, then RESUMED; an unknown session gets INVALID_SESSION (false)", async () => {
    const { fake, call } = gatewaySetup();
    const first = await connect(fake);
    await first.send(identify());
    const sessionId = first.frames[1].d.session_id as string;
    expect((await call("/__fake/gateway/drop", { method: "POST" })).status).toBe(204);
    await flushSockets();
    expect(first.closes).toEqual([4000]);
    await call("/__fake/trigger", post({ kind: "message", text: "missed" }));
    const second = await connect(fake);
    await second.send({ op: 6, d: { token: "bot-token", session_id: sessionId, seq: 1 } });
    expect(second.frames.slice(1).map((f) => [f.t, f.s])).toEqual([
      ["MESSAGE_CREATE", 2],
      ["RESUMED", 3],
    ]);
    const stranger = await connect(fake);
    await stranger.send({ op: 6, d: { token: "bot-token", session_id: "nope", seq: 1 } });
    expect(stranger.frames.at(-1)).toEqual({ op: 9, d: false });
  });

  it("RESUME with a sequence the session never reached (999999) is closed 4007 and the session ends", async () => {
    const { fake } = gatewaySetup();
    const first = await connect(fake);
    await first.send(identify());
    const sessionId = first.frames[1].d.session_id as string;
    const resume = await connect(fake);
    await resume.send({ op: 6, d: { token: "bot-token", session_id: sessionId, seq: 999_999 } });
    expect(resume.closes).toEqual([4007]);
    expect(resume.frames.some((f) => f.t === "RESUMED")).toBe(false);
    const again = await connect(fake);
    await again.send({ op: 6, d: { token: "bot-token", session_id: sessionId, seq: 1 } });
    expect(again.frames.at(-1)).toEqual({ op: 9, d: false });
  });

  it("a client that stops heartbeating is closed once heartbeat_interval (and its tolerance) passes; its session RESUMEs", async () => {
    const { fake, call, clock } = gatewaySetup();
    await call("/__fake/gateway/session-start-limit", post({ maxConcurrency: 2 }));
    const beating = await connect(fake);
    await beating.send(identify({ shard: [0, 2] }));
    const silent = await connect(fake);
    await silent.send(identify({ shard: [1, 2] }));
    const sessionId = silent.frames[1].d.session_id as string;
    // One heartbeats every interval; the other sends nothing after READY.
    for (let t = 0; t < 5; t++) {
      await clock.advance(200, flushSockets);
      await beating.send({ op: 1, d: null });
    }
    expect(beating.closes).toEqual([]);
    expect(silent.closes).toEqual([4000]);
    expect(fake.gateway.state().events).toContainEqual(
      expect.objectContaining({ kind: "closed", code: 4000, by: "gateway", sessionId }),
    );
    const resumed = await connect(fake);
    await resumed.send({ op: 6, d: { token: "bot-token", session_id: sessionId, seq: 1 } });
    expect(resumed.frames.at(-1)).toMatchObject({ t: "RESUMED" });
  });

  it("the heartbeat deadline: open at interval × 1.25 − 1 ms, closed at interval × 1.25", async () => {
    const { fake, clock } = gatewaySetup();
    const client = await connect(fake);
    await clock.advance(249, flushSockets);
    expect(client.closes).toEqual([]);
    await clock.advance(1, flushSockets);
    expect(client.closes).toEqual([4000]);
  });

  it("IDENTIFY pacing: a second IDENTIFY of the same rate-limit key within 5 s gets INVALID_SESSION (false); after 5 s, READY", async () => {
    const { fake, clock } = gatewaySetup();
    const first = await connect(fake);
    await first.send(identify());
    expect(first.frames[1]).toMatchObject({ t: "READY" });
    const second = await connect(fake);
    await second.send(identify());
    expect(second.frames.at(-1)).toEqual({ op: 9, d: false });
    await clock.advance(IDENTIFY_WINDOW_MS, flushSockets);
    const third = await connect(fake);
    await third.send(identify());
    expect(third.frames[1]).toMatchObject({ t: "READY" });
  });

  it("with max_concurrency 2, shards 0 and 1 (keys 0 and 1) may IDENTIFY at once; shard 2 (key 0) may not", async () => {
    const { fake, call } = gatewaySetup();
    await call("/__fake/gateway/session-start-limit", post({ maxConcurrency: 2 }));
    expect((await gatewayBot(call)).session_start_limit.max_concurrency).toBe(2);
    const answers: unknown[] = [];
    for (const shard of [0, 1, 2]) {
      const client = await connect(fake);
      await client.send(identify({ shard: [shard, 3] }));
      answers.push(client.frames.at(-1).t ?? client.frames.at(-1));
    }
    expect(answers).toEqual(["READY", "READY", { op: 9, d: false }]);
  });

  it("session_start_limit counts IDENTIFYs; one past remaining 0 ends every session and resets the bot token (REST refuses it too)", async () => {
    const { fake, call } = gatewaySetup();
    const live = await connect(fake);
    await live.send(identify());
    expect((await gatewayBot(call)).session_start_limit).toMatchObject({ remaining: 999 });
    await call("/__fake/gateway/session-start-limit", post({ remaining: 0, resetAfter: 60_000 }));
    expect((await gatewayBot(call)).session_start_limit).toMatchObject({ remaining: 0, reset_after: 60_000 });
    const one = await connect(fake);
    await one.send(identify());
    expect(one.closes).toEqual([4004]);
    expect(live.closes).toEqual([4004]);
    expect(fake.gateway.state()).toMatchObject({ tokenReset: true, sessions: [] });
    expect((await call("/api/v10/gateway/bot", { headers: { authorization: "Bot bot-token" } })).status).toBe(401);
    expect((await call("/__fake/gateway/session-start-limit", post({ remaining: -1 }))).status).toBe(400);
  });

  it("reset_after passed: the session starts are back to the total", async () => {
    const { call, clock } = gatewaySetup();
    await call("/__fake/gateway/session-start-limit", post({ remaining: 0, resetAfter: 60_000 }));
    await clock.advance(60_000, flushSockets);
    expect((await gatewayBot(call)).session_start_limit).toEqual({
      total: 1000,
      remaining: 1000,
      reset_after: 86_400_000,
      max_concurrency: 1,
    });
  });

  it("test switches: RECONNECT, INVALID_SESSION, a heartbeat request (op 1), withheld ACKs", async () => {
    const { fake, call } = gatewaySetup();
    const client = await connect(fake);
    await client.send(identify());
    await call("/__fake/gateway/reconnect", { method: "POST" });
    await call("/__fake/gateway/invalid-session", post({ resumable: true }));
    await call("/__fake/gateway/request-heartbeat", { method: "POST" });
    await call("/__fake/gateway/withhold-acks", { method: "POST" });
    await client.send({ op: 1, d: 1 });
    expect(client.frames.slice(2)).toEqual([
      { op: 7, d: null },
      { op: 9, d: true },
      { op: 1, d: null },
    ]);
    await call("/__fake/gateway/invalid-session", post({ resumable: false }));
    expect(((await (await call("/__fake/gateway")).json()) as { sessions: unknown[] }).sessions).toEqual([]);
    expect((await call("/__fake/gateway/unknown", { method: "POST" })).status).toBe(404);
  });
});

// Interactions with components and modals, answered the way each interaction type allows
// (interactions/receiving-and-responding.mdx, components/reference.mdx).
describe("fake chat server: components, modals and interaction answers as the provider's", () => {
  const json = (method: string, body: unknown, auth?: string): RequestInit => ({
    method,
    headers: { "content-type": "application/json", ...(auth ? { authorization: auth } : {}) },
    body: JSON.stringify(body),
  });
  const channel = `/api/v10/channels/${TEST_GUILD.channels[0]}/messages`;
  const approveRow = {
    type: 1,
    components: [
      { type: 2, style: 3, label: "Approve", custom_id: "approve:1" },
      { type: 2, style: 4, label: "Reject", custom_id: "reject:1" },
    ],
  };

  async function world(now = () => Date.now()) {
    const w = setup({ now });
    await approve(w.call);
    const post = (components: unknown[]) =>
      w.call(channel, json("POST", { content: "Deploy?", components }, "Bot bot-token"));
    const trigger = async (body: Record<string, unknown>) =>
      (await w.call("/__fake/trigger", json("POST", { guildId: TEST_GUILD.id, ...body }))).json() as Promise<any>;
    const answer = (out: any, body: unknown) =>
      w.call(`/api/v10/interactions/${out.payload.id}/${out.payload.token}/callback`, json("POST", body));
    return { ...w, post, trigger, answer };
  }

  it.each([
    [
      "six rows",
      Array(6).fill({ type: 1, components: [{ type: 2, style: 2, label: "x", custom_id: "a" }] }),
      "components",
      "BASE_TYPE_BAD_LENGTH",
    ],
    [
      "a text input in a message",
      [{ type: 1, components: [{ type: 4, custom_id: "t", label: "T", style: 1 }] }],
      "components.0.components.0.type",
      "COMPONENT_TYPE_INVALID",
    ],
    [
      "a link button with a custom_id",
      [{ type: 1, components: [{ type: 2, style: 5, label: "L", url: "https://x", custom_id: "c" }] }],
      "components.0.components.0.custom_id",
      "BUTTON_COMPONENT_CUSTOM_ID_WITH_URL",
    ],
    [
      "a custom_id of 101 characters",
      [{ type: 1, components: [{ type: 2, style: 1, label: "x", custom_id: "c".repeat(101) }] }],
      "components.0.components.0.custom_id",
      "BASE_TYPE_BAD_LENGTH",
    ],
    [
      "a select beside a button",
      [
        {
          type: 1,
          components: [
            { type: 3, custom_id: "s", options: [{ label: "a", value: "a" }] },
            { type: 2, style: 1, label: "b", custom_id: "b" },
          ],
        },
      ],
      "components.0.components",
      "COMPONENT_LAYOUT_WIDTH_EXCEEDED",
    ],
    [
      "two components with one custom_id",
      [
        {
          type: 1,
          components: [
            { type: 2, style: 1, label: "a", custom_id: "x" },
            { type: 2, style: 1, label: "b", custom_id: "x" },
          ],
        },
      ],
      "components.0.components.1.custom_id",
      "COMPONENT_CUSTOM_ID_DUPLICATED",
    ],
  ])("a message with %s is refused 50035 naming the field", async (_name, components, path, code) => {
    const w = await world();
    const response = await w.post(components);
    expect(response.status).toBe(400);
    const body = (await response.json()) as any;
    expect(body).toMatchObject({ code: 50035, message: "Invalid Form Body" });
    let node = body.errors;
    for (const key of path.split(".")) node = node[key];
    expect(node._errors[0].code).toBe(code);
  });

  it("a click on a component of a message: a signed type-3 interaction carrying the message; answers 6 or 7 edit that message", async () => {
    const w = await world();
    const message = (await (await w.post([approveRow])).json()) as any;
    const out = await w.trigger({ kind: "component", customId: "approve:1" });
    expect(out.payload).toMatchObject({
      type: 3,
      data: { custom_id: "approve:1", component_type: 2 },
      message: { id: message.id, content: "Deploy?" },
    });
    // The plugin answered 202 without answering by callback first: the user sees "This interaction failed".
    expect(out.interaction).toMatchObject({
      acknowledged: false,
      failed: expect.stringMatching(/202 without answering/),
    });
    const again = await w.trigger({ kind: "component", customId: "reject:1" });
    const updated = await w.call(
      `/api/v10/interactions/${again.payload.id}/${again.payload.token}/callback?with_response=true`,
      json("POST", { type: 7, data: { content: "Rejected", components: [] } }),
    );
    expect(updated.status).toBe(200);
    expect(await updated.json()).toMatchObject({
      resource: { type: 7, message: { id: message.id, content: "Rejected" } },
    });
    expect((await w.answer(again, { type: 4, data: { content: "twice" } })).status).toBe(400); // 40060
  });

  it.each([
    ["a command", { kind: "command", name: "hello" }, [6, 7], [4, 5, 9]],
    ["a click", { kind: "component", customId: "approve:1" }, [], [4, 5, 6, 7, 9]],
  ])("%s takes callback types %j only as refusals, %j as answers", async (_name, trigger, refused, accepted) => {
    const w = await world();
    await w.post([approveRow]);
    for (const type of refused) {
      const out = await w.trigger(trigger);
      const response = await w.answer(out, { type, data: { content: "x" } });
      expect(response.status).toBe(400);
      expect(((await response.json()) as any).errors.type._errors[0].code).toBe("INTERACTION_RESPONSE_TYPE_INVALID");
    }
    for (const type of accepted) {
      const out = await w.trigger(trigger);
      const data =
        type === 9
          ? {
              custom_id: "m",
              title: "T",
              components: [{ type: 1, components: [{ type: 4, custom_id: "f", label: "F", style: 1 }] }],
            }
          : { content: "ok" };
      expect((await w.answer(out, { type, data })).status, `type ${type}`).toBe(204);
    }
  });

  it("a modal: 9 opens it (its rules checked); a submit is a type-5 interaction with the fields, which takes no modal", async () => {
    const w = await world();
    await w.post([approveRow]);
    const click = await w.trigger({ kind: "component", customId: "reject:1" });
    const bad = await w.answer(click, { type: 9, data: { custom_id: "why", title: "x".repeat(46), components: [] } });
    expect(((await bad.json()) as any).errors.data.title._errors[0].code).toBe("BASE_TYPE_BAD_LENGTH");
    const modal = {
      custom_id: "why",
      title: "Why?",
      components: [
        { type: 1, components: [{ type: 4, custom_id: "reason", label: "Reason", style: 2, max_length: 10 }] },
      ],
    };
    expect((await w.answer(click, { type: 9, data: modal })).status).toBe(204);
    expect((await w.trigger({ kind: "modal", customId: "why", fields: { reason: "far too long" } })).error).toBe(
      "The field reason takes 0–10 characters.",
    );
    const submit = await w.trigger({ kind: "modal", customId: "why", fields: { reason: "Friday" } });
    expect(submit.payload).toMatchObject({
      type: 5,
      data: {
        custom_id: "why",
        components: [{ type: 1, components: [{ type: 4, custom_id: "reason", value: "Friday" }] }],
      },
      message: { content: "Deploy?" },
    });
    const response = await w.answer(submit, { type: 9, data: modal });
    expect(((await response.json()) as any).errors.type._errors[0].code).toBe("INTERACTION_RESPONSE_TYPE_INVALID");
  });

  it("a first answer after 3 seconds is too late: the interaction failed", async () => {
    let now = 1_800_000_000_000;
    const w = await world(() => now);
    const out = await w.trigger({ kind: "command", name: "slow" });
    now += 3_001;
    expect((await w.answer(out, { type: 5 })).status).toBe(204);
    const state = (await (await w.call("/__fake/state")).json()) as any;
    expect(state.interactions.at(-1).failed).toBe("The first answer came after 3 s: the token was invalidated.");
  });

  it("the chat view: messages with their buttons, an ephemeral answer only for its user, a deferred one as thinking", async () => {
    const w = await world();
    await w.post([approveRow]);
    const out = await w.trigger({ kind: "component", customId: "approve:1" });
    await w.answer(out, { type: 4, data: { content: "Only you", flags: 64 } });
    const command = await w.trigger({ kind: "command", name: "deploy" });
    await w.answer(command, { type: 5 });
    const view = (await (await w.call(`/__fake/chat?resourceId=${TEST_GUILD.id}`)).json()) as any;
    expect(view.channels[0].messages).toEqual([
      expect.objectContaining({
        text: "Deploy?",
        bot: true,
        rows: [
          {
            kind: "buttons",
            buttons: [
              { label: "Approve", style: "success", id: "approve:1", url: null, disabled: false },
              { label: "Reject", style: "danger", id: "reject:1", url: null, disabled: false },
            ],
          },
        ],
      }),
      expect.objectContaining({ text: "Only you", ephemeral: true }),
      expect.objectContaining({ pending: true, command: "Test User used /deploy" }),
    ]);
    expect((await w.call("/__fake/chat?resourceId=1")).status).toBe(404);
  });
});
