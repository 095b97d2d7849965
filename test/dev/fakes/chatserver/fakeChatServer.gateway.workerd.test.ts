// The fake chat server's Gateway: the bot's socket, IDENTIFY, heartbeats, resumes and the session start
// limit, on a clock the test moves.
import { describe, expect, it } from "vitest";
import { TEST_GUILD, type FakeChatServerConfig } from "#src/dev/fakes/chatserver/fakeChatServer.ts";
import { IDENTIFY_WINDOW_MS, RELAY_INTENTS } from "#src/plugins/chatserver/gatewayRelay/gatewayProtocol.ts";
import { flushSockets, manualClock } from "#test/support/workerd/index.ts";
import { FAKE, setup } from "./fakeChatServer.fixture.ts";

describe("fake chat server: Gateway", () => {
  /** The fake on a clock the test moves (its heartbeat deadlines, the IDENTIFY window, the session start limit). */
  function gatewaySetup(overrides: Partial<FakeChatServerConfig> = {}) {
    const clock = manualClock(1_000_000);
    return { clock, ...setup({ now: clock.now, timers: clock.timers, gatewayHeartbeatMS: 200, ...overrides }) };
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
