// The Gateway relay against the fake chat server's Gateway, in workerd: real
// WebSocketPair sockets, the plugin's dispatch path, and a clock the test
// moves (the relay's timers and the fake's heartbeat interval are injected).
import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import {
  OTHER_GUILD,
  TEST_GUILD,
  type FakeChatServer,
  type FakeChatServerConfig,
} from "#src/dev/fakes/chatserver/fakeChatServer.ts";
import { listConnectionSummaries, upsertConnection } from "#src/workers/db/connectionsStore.ts";
import type { ProjectRow } from "#src/workers/db/projectsTable.ts";
import { claimResource } from "#src/workers/db/resourceClaims.ts";
import type { ChatServerEnv } from "#src/plugins/chatserver/env.ts";
import type { GatewayConnection } from "#src/plugins/chatserver/gatewayRelay/gatewayConnection.ts";
import { RELAY_INTENTS } from "#src/plugins/chatserver/gatewayRelay/gatewayProtocol.ts";
import { type SavedSession, STOPPED_RETRY_MS } from "#src/plugins/chatserver/gatewayRelay/gatewaySession.ts";
import { relayConnection } from "#src/plugins/chatserver/gatewayRelay/GatewayRelay.ts";
import {
  fakeDispatcher,
  flushSockets,
  manualClock,
  TOKEN_ENCRYPTION_KEY,
  userWithProject,
  type FakeDispatcher,
  testChatServer,
  chatServerPluginEnv,
} from "#test/support/workerd/index.ts";

const FAKE = "https://discord.fake";
const APP = "900000000000000001";
const HEARTBEAT_MS = 200;

const flush = flushSockets;

interface World {
  env: ChatServerEnv;
  fake: FakeChatServer;
  dispatcher: FakeDispatcher;
  relay: GatewayConnection;
  clock: ReturnType<typeof manualClock>;
  saved: SavedSession[];
  settle(): Promise<void>;
  hook(path: string, body?: unknown): Promise<void>;
  trigger(kind: "message" | "reaction", text: string, guildId?: string): Promise<void>;
  delivered(): { name: string; text: string | null }[];
}

function world(random = 0, fakeOptions: Partial<FakeChatServerConfig> = {}): World {
  const dispatcher = fakeDispatcher(() => Response.json({ ok: true }));
  const clock = manualClock();
  const fake = testChatServer({
    gatewayHeartbeatMS: HEARTBEAT_MS,
    now: clock.now,
    timers: clock.timers,
    ...fakeOptions,
  });
  const pluginEnvValue = chatServerPluginEnv(fake, { DISPATCHER: dispatcher.namespace });
  const saved: SavedSession[] = [];
  const relay = relayConnection(
    pluginEnvValue,
    [0, 1],
    { load: async () => saved.at(-1) ?? null, save: async (s) => void saved.push(s) },
    {
      timers: clock.timers,
      now: clock.now,
      session: { token: "bot-token", intents: RELAY_INTENTS, shard: [0, 1], random: () => random },
    },
  );
  const settle = async () => {
    await flush();
    await relay.settled();
    await flush();
  };
  return {
    env: pluginEnvValue,
    fake,
    dispatcher,
    relay,
    clock,
    saved,
    settle,
    async hook(path, body) {
      const response = await fake.fetch(
        new Request(`${FAKE}/__fake/gateway/${path}`, { method: "POST", body: JSON.stringify(body ?? {}) }),
      );
      expect(response.status).toBe(204);
      await settle();
    },
    async trigger(kind, text, guildId = TEST_GUILD.id) {
      const response = await fake.fetch(
        new Request(`${FAKE}/__fake/trigger`, { method: "POST", body: JSON.stringify({ kind, guildId, text }) }),
      );
      expect(response.status).toBe(200);
      await settle();
    },
    delivered: () =>
      dispatcher.calls.map((c) => {
        const body = JSON.parse(c.body);
        return { name: body.name, text: body.event.content ?? body.event.emoji ?? null };
      }),
  };
}

const gatewayEvents = (w: World) => w.fake.gateway.state().events.filter((e) => e.kind !== "heartbeat");
const count = (w: World, kind: string) => gatewayEvents(w).filter((e) => e.kind === kind).length;

/** Another relay (shard, session) on the same fake, env and clock. */
function otherRelay(
  w: World,
  shard: [number, number],
  session: Partial<{ token: string; intents: number }> = {},
  load: SavedSession | null = null,
) {
  const relay = relayConnection(
    w.env,
    shard,
    { load: async () => load, save: async () => {} },
    {
      timers: w.clock.timers,
      now: w.clock.now,
      session: { token: "bot-token", intents: RELAY_INTENTS, shard, random: () => 0, ...session },
    },
  );
  const settle = async () => {
    await w.settle();
    await relay.settled();
    await w.settle();
  };
  return { relay, settle };
}

let alpha: ProjectRow;
let live: World[] = [];
beforeEach(async () => {
  for (const w of live) w.relay.shutdown();
  live = [];
  alpha = (await userWithProject("alpha@example.test", "alpha")).row;
  await claimResource(env.DB, {
    pluginId: "chatserver",
    resourceType: "server",
    projectId: alpha.id,
    externalResourceId: TEST_GUILD.id,
    displayName: TEST_GUILD.name,
  });
});

async function connected(random = 0): Promise<World> {
  const w = world(random);
  live.push(w);
  await w.relay.start();
  await w.settle();
  expect(w.relay.status()).toMatchObject({ phase: "ready", connected: true, hasSession: true });
  return w;
}

describe("GatewayRelay against the fake Gateway", () => {
  it("asks GET /gateway/bot where to connect, IDENTIFYs with the bot token and the intents, and stores the session", async () => {
    const w = await connected();
    const getBot = w.fake.recorded().find((r) => r.path === "/api/v10/gateway/bot");
    expect(getBot).toMatchObject({ method: "GET", auth: "Bot bot-token", status: 200 });
    expect(gatewayEvents(w).map((e) => e.kind)).toEqual(["connected", "identify"]);
    const session = w.fake.gateway.state().sessions[0]!;
    expect(w.saved.at(-1)).toEqual({ sessionId: session.id, resumeUrl: `wss://discord.fake/gateway`, seq: 1 });
  });

  it("a start while connected or waiting to reconnect opens no second connection (pokes cannot force reconnects)", async () => {
    const w = await connected(0.5);
    await w.relay.start();
    await w.hook("drop");
    await w.relay.start();
    await w.settle();
    expect(gatewayEvents(w).filter((e) => e.kind === "connected")).toHaveLength(1);
    expect(w.relay.status().phase).toBe("backoff");
  });

  it("a message and a reaction in a claimed server reach the project through /__plugin/chatserver; the bot's own messages and unclaimed servers do not", async () => {
    const w = await connected();
    await w.trigger("message", "hello there");
    await w.trigger("reaction", "🎉");
    await w.trigger("message", "elsewhere", OTHER_GUILD.id);
    w.fake.gateway.publish("MESSAGE_CREATE", {
      id: "42",
      guild_id: TEST_GUILD.id,
      channel_id: TEST_GUILD.channels[0],
      content: "my own reply",
      author: { id: APP, username: "platform-bot", bot: true },
    });
    await w.settle();
    expect(w.delivered()).toEqual([
      { name: "message", text: "hello there" },
      { name: "reaction", text: "🎉" },
    ]);
    const call = w.dispatcher.calls[0]!;
    expect(call.scriptName).toBe(alpha.script_name);
    expect(call.url.pathname).toBe("/__plugin/chatserver");
    expect(call.headers.get("x-platform-internal")).toBeTruthy();
    expect(JSON.parse(call.body)).toMatchObject({
      kind: "event",
      name: "message",
      project: { slug: "alpha" },
      user: { id: "555555555555555555", name: "Test User" },
      event: { type: "message", guildId: TEST_GUILD.id, channelId: TEST_GUILD.channels[0], content: "hello there" },
    });
    expect(typeof JSON.parse(call.body).resource).toBe("string");
  });

  it("events sent while the socket is down are delivered after RESUME exactly once, in order", async () => {
    const w = await connected(0.5);
    await w.trigger("message", "before");
    await w.hook("drop");
    expect(w.relay.status()).toMatchObject({ phase: "backoff", connected: false });
    for (const text of ["one", "two", "three"]) await w.trigger("message", text);
    expect(w.delivered().map((d) => d.text)).toEqual(["before"]);

    await w.clock.advance(1000, w.settle); // the first backoff is at most 1 s
    await w.settle();
    const session = w.fake.gateway.state().sessions[0]!;
    expect(gatewayEvents(w).map((e) => e.kind)).toEqual(["connected", "identify", "closed", "connected", "resume"]);
    expect(gatewayEvents(w).at(-1)).toMatchObject({ kind: "resume", sessionId: session.id, seq: 2 });
    expect(w.delivered().map((d) => d.text)).toEqual(["before", "one", "two", "three"]);
    expect(w.relay.status()).toMatchObject({ phase: "ready", connected: true, failures: 0 });

    // A relay evicted and restarted from an older saved sequence gets a replay of what was delivered: not again.
    w.relay.shutdown();
    const restarted = relayConnection(
      w.env,
      [0, 1],
      { load: async () => ({ ...w.saved.at(-1)!, seq: 1 }), save: async () => {} },
      {
        timers: w.clock.timers,
        session: { token: "bot-token", intents: RELAY_INTENTS, shard: [0, 1], random: () => 0 },
      },
    );
    await restarted.start();
    await w.settle();
    await restarted.settled();
    await w.settle();
    expect(gatewayEvents(w).at(-1)).toMatchObject({ kind: "resume", sessionId: session.id, seq: 1 });
    expect(restarted.status()).toMatchObject({ phase: "ready", seq: 7 });
    expect(w.delivered().map((d) => d.text)).toEqual(["before", "one", "two", "three"]);
    restarted.shutdown();
  });

  it("a zombie connection (ACKs withheld) is detected within two heartbeat intervals and RESUMEd", async () => {
    const w = await connected(0);
    await w.clock.advance(HEARTBEAT_MS * 3, w.settle); // healthy: heartbeats are ACKed
    expect(w.relay.status()).toMatchObject({ phase: "ready", failures: 0 });
    await w.hook("withhold-acks");
    const since = w.clock.now();
    let detectedAt: number | null = null;
    while (detectedAt === null && w.clock.now() - since <= HEARTBEAT_MS * 3) {
      await w.clock.advance(10, w.settle);
      if (gatewayEvents(w).some((e) => e.kind === "closed" && e.code === 4000)) detectedAt = w.clock.now();
    }
    expect(detectedAt).not.toBeNull();
    expect(detectedAt! - since).toBeLessThanOrEqual(HEARTBEAT_MS * 2);
    await w.clock.advance(10, w.settle);
    expect(gatewayEvents(w).at(-1)).toMatchObject({ kind: "resume" });
    expect(w.relay.status()).toMatchObject({ phase: "ready", connected: true });
    await w.trigger("message", "after the zombie");
    expect(w.delivered().map((d) => d.text)).toEqual(["after the zombie"]);
  });

  it.each([
    ["RECONNECT (op 7)", "reconnect", {}, "resume"],
    ["INVALID_SESSION resumable", "invalid-session", { resumable: true }, "resume"],
    ["INVALID_SESSION not resumable", "invalid-session", { resumable: false }, "identify"],
  ] as const)("%s: the relay reconnects (%s) and events flow again", async (_name, path, body, expected) => {
    const w = await connected(0);
    await w.hook(path, body);
    await w.clock.advance(5000, w.settle);
    const kinds = gatewayEvents(w).map((e) => e.kind);
    expect(kinds.slice(0, 2)).toEqual(["connected", "identify"]);
    expect(kinds.at(-1)).toBe(expected);
    expect(w.relay.status()).toMatchObject({ phase: "ready", connected: true });
    await w.trigger("message", "still here");
    expect(w.delivered().map((d) => d.text)).toEqual(["still here"]);
  });

  it("GUILD_DELETE of a claimed server releases the claim; an outage (unavailable) does not", async () => {
    const w = await connected();
    const count = () => env.DB.prepare("SELECT COUNT(*) AS n FROM plugin_resources").first<number>("n");
    w.fake.gateway.publish("GUILD_DELETE", { id: TEST_GUILD.id, unavailable: true });
    await w.settle();
    expect(await count()).toBe(1);
    w.fake.gateway.publish("GUILD_DELETE", { id: TEST_GUILD.id });
    await w.settle();
    expect(await count()).toBe(0);
    await w.trigger("message", "after removal");
    expect(w.delivered()).toEqual([]);
  });

  it("a wrong bot token is a fatal close: the relay stops instead of reconnecting", async () => {
    const w = world(0);
    live.push(w);
    // The same fake, but IDENTIFY with another token.
    const relay = relayConnection(
      w.env,
      [0, 1],
      { load: async () => null, save: async () => {} },
      {
        timers: w.clock.timers,
        session: { token: "stolen-token", intents: RELAY_INTENTS, shard: [0, 1], random: () => 0 },
      },
    );
    await relay.start();
    await flush();
    await w.clock.advance(60_000, flush);
    expect(relay.status()).toMatchObject({
      phase: "stopped",
      connected: false,
      stoppedBy: { code: 4004, reason: "Authentication failed." },
    });
    expect(gatewayEvents(w).filter((e) => e.kind === "connected")).toHaveLength(1);
    relay.shutdown();
  });
});

describe("GatewayRelay tells, not stops", () => {
  /** Every project's chat-server connection (the bot is shared), as `platform plugin status` reads it. */
  async function connectionHealth(projectId: number) {
    const summaries = await listConnectionSummaries(env.DB, projectId);
    return summaries.find((c) => c.plugin === "chatserver");
  }

  it("close 4014 (Message Content intent not enabled): every project's chat-server connection shows the cause and the fix; retried after 10 minutes, never sooner; READY clears it", async () => {
    const beta = (await userWithProject("beta@example.test", "beta")).row;
    for (const project of [alpha, beta]) {
      await upsertConnection(env.DB, TOKEN_ENCRYPTION_KEY, {
        pluginId: "chatserver",
        projectId: project.id,
        externalUserId: "555555555555555555",
        accessToken: "unused",
      });
    }
    const w = world(0, { gatewayPrivilegedIntents: 0 });
    live.push(w);
    await w.relay.start();
    await w.settle();
    expect(gatewayEvents(w).at(-1)).toMatchObject({ kind: "closed", code: 4014, by: "gateway" });
    expect(w.relay.status()).toMatchObject({
      phase: "stopped",
      stoppedBy: { code: 4014, reason: "Disallowed intent(s)." },
      problem: { code: "close_4014" },
    });
    for (const project of [alpha, beta]) {
      const health = await connectionHealth(project.id);
      expect(health).toMatchObject({ status: "degraded", problem: { code: "close_4014" } });
      expect(health!.problem!.cause).toContain("close 4014");
      expect(health!.problem!.fix).toContain("Enable the Message Content intent for the bot");
    }

    // Pokes (deploys, installs) and time short of 10 minutes do not reconnect.
    await w.relay.start();
    await w.clock.advance(STOPPED_RETRY_MS - 1, w.settle);
    expect(count(w, "connected")).toBe(1);
    await w.clock.advance(1, w.settle);
    expect(count(w, "connected")).toBe(2);
    expect(gatewayEvents(w).at(-1)).toMatchObject({ kind: "closed", code: 4014 });

    // The intent enabled at the portal: the next retry gets READY and the health clears.
    const enable = await w.fake.fetch(
      new Request(`${FAKE}/__fake/gateway/privileged-intents`, {
        method: "POST",
        body: JSON.stringify({ enabled: ["MESSAGE_CONTENT"] }),
      }),
    );
    expect(enable.status).toBe(204);
    await w.clock.advance(STOPPED_RETRY_MS, w.settle);
    expect(w.relay.status()).toMatchObject({ phase: "ready", connected: true, stoppedBy: null, problem: null });
    expect(await connectionHealth(alpha.id)).toMatchObject({ status: "active", problem: null });
    await w.trigger("message", "content at last");
    expect(w.delivered()).toEqual([{ name: "message", text: "content at last" }]);
  });

  it.each([
    ["intents with an undefined bit (1 << 30)", 4013, [0, 1], { intents: RELAY_INTENTS | (1 << 30) }],
    ["shard [5, 2]", 4010, [5, 2], {}],
  ] as const)("%s: the fake closes %i, the relay stops and reports it", async (_name, code, shard, session) => {
    const w = world(0);
    live.push(w);
    const other = otherRelay(w, [...shard], session);
    await other.relay.start();
    await other.settle();
    expect(gatewayEvents(w).at(-1)).toMatchObject({ kind: "closed", code, by: "gateway" });
    expect(other.relay.status()).toMatchObject({
      phase: "stopped",
      stoppedBy: { code },
      problem: { code: `close_${code}` },
    });
    const problem = await env.DB.prepare(
      "SELECT code FROM plugin_problems WHERE plugin_id = 'chatserver' AND source = ?",
    )
      .bind(`gateway shard ${shard[0]} of ${shard[1]}`)
      .first<string>("code");
    expect(problem).toBe(`close_${code}`);
    other.relay.shutdown();
  });

  it("session_start_limit.remaining 0: the relay opens no connection and sends no IDENTIFY until reset_after, says why, then connects", async () => {
    const w = world(0);
    live.push(w);
    const limit = await w.fake.fetch(
      new Request(`${FAKE}/__fake/gateway/session-start-limit`, {
        method: "POST",
        body: JSON.stringify({ remaining: 0, resetAfter: 3_600_000 }),
      }),
    );
    expect(limit.status).toBe(204);
    await w.relay.start();
    await w.settle();
    expect(w.relay.status()).toMatchObject({ phase: "backoff", problem: { code: "session_starts_used_up" } });
    await w.relay.start(); // a poke does not cut the wait short
    await w.clock.advance(3_600_000 - 1, w.settle);
    expect(count(w, "connected")).toBe(0);
    expect(count(w, "identify")).toBe(0);
    expect(w.fake.gateway.state().tokenReset).toBe(false);
    await w.clock.advance(1, w.settle);
    expect(gatewayEvents(w).map((e) => e.kind)).toEqual(["connected", "identify"]);
    expect(w.relay.status()).toMatchObject({ phase: "ready", problem: null });
  });

  it("max_concurrency paces shards: two shards started together IDENTIFY 5 s apart, and the fake sends no INVALID_SESSION", async () => {
    const w = world(0);
    live.push(w);
    const first = otherRelay(w, [0, 2]);
    const second = otherRelay(w, [1, 2]);
    await Promise.all([first.relay.start(), second.relay.start()]);
    await first.settle();
    await second.settle();
    expect(count(w, "identify")).toBe(1);
    await w.clock.advance(4999, w.settle);
    expect(count(w, "identify")).toBe(1);
    await w.clock.advance(1, w.settle);
    await second.settle();
    expect(count(w, "identify")).toBe(2);
    expect(count(w, "invalid-session")).toBe(0);
    expect([first.relay.status().phase, second.relay.status().phase]).toEqual(["ready", "ready"]);
    first.relay.shutdown();
    second.relay.shutdown();
  });

  it("RESUME with a sequence the session never reached: the fake closes 4007 and the relay IDENTIFYs a new session", async () => {
    const w = await connected(0);
    const session = w.fake.gateway.state().sessions[0]!;
    w.relay.shutdown();
    const restarted = otherRelay(w, [0, 1], {}, { sessionId: session.id, resumeUrl: w.fake.gateway.url, seq: 999_999 });
    await restarted.relay.start();
    await restarted.settle();
    expect(gatewayEvents(w).slice(-2)).toMatchObject([
      { kind: "resume", seq: 999_999 },
      { kind: "closed", code: 4007, by: "gateway" },
    ]);
    await w.clock.advance(5000, restarted.settle); // the backoff, then the IDENTIFY slot the first session used
    expect(gatewayEvents(w).at(-1)).toMatchObject({ kind: "identify" });
    expect(restarted.relay.status()).toMatchObject({ phase: "ready", hasSession: true });
    restarted.relay.shutdown();
  });

  it("a heartbeat the gateway asks for (op 1) is sent at once and expects its ACK: without one, a zombie within an interval", async () => {
    const w = await connected(0.5);
    const heartbeats = () => w.fake.gateway.state().events.filter((e) => e.kind === "heartbeat").length;
    await w.clock.advance(HEARTBEAT_MS * 2, w.settle);
    const before = heartbeats();
    await w.hook("request-heartbeat");
    expect(heartbeats()).toBe(before + 1);
    expect(w.relay.status()).toMatchObject({ phase: "ready", connected: true });

    await w.hook("withhold-acks");
    await w.hook("request-heartbeat");
    const since = w.clock.now();
    await w.clock.advance(HEARTBEAT_MS, w.settle);
    const zombie = gatewayEvents(w).find((e) => e.kind === "closed" && e.code === 4000 && e.by === "client");
    expect(zombie).toBeDefined();
    expect(w.clock.now() - since).toBeLessThanOrEqual(HEARTBEAT_MS);
  });
});
