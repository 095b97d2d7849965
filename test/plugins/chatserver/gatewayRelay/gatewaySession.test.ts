// The Gateway protocol as a pure state machine, table-driven: each row is
// what happened so far, then one input, and the actions it must produce.
import { describe, expect, it } from "vitest";
import {
  RELAY_INTENTS,
  type SessionStartLimit,
  shardFor,
} from "#src/plugins/chatserver/gatewayRelay/gatewayProtocol.ts";
import {
  backoffMS,
  initialSession,
  STOPPED_RETRY_MS,
  step,
  type SavedSession,
  type SessionAction,
  type SessionConfig,
  type SessionInput,
  type SessionState,
} from "#src/plugins/chatserver/gatewayRelay/gatewaySession.ts";
import {
  problemForClose,
  sessionStartsUsedUp,
  tokenRefused,
} from "#src/plugins/chatserver/gatewayRelay/relayProblem.ts";

const GATEWAY = "wss://gateway.test";
const RESUME_URL = "wss://resume.gateway.test";
const INTERVAL = 200;

const config = (random = 0.25, shard: [number, number] = [0, 1]): SessionConfig => ({
  token: "bot-token",
  intents: RELAY_INTENTS,
  shard,
  random: () => random,
});

const LIMIT: SessionStartLimit = { total: 1000, remaining: 999, resetAfterMS: 3_600_000, maxConcurrency: 1 };
const start: SessionInput = { type: "start" };
const gatewayBot = (limit: Partial<SessionStartLimit> = {}): SessionInput => ({
  type: "gateway",
  url: GATEWAY,
  limit: { ...LIMIT, ...limit },
});
const slot = (waitMS = 0): SessionInput => ({ type: "identifySlot", waitMS });
const hello: SessionInput = { type: "frame", frame: { op: 10, d: { heartbeat_interval: INTERVAL } } };
const ready: SessionInput = {
  type: "frame",
  frame: { op: 0, t: "READY", s: 1, d: { session_id: "sess-1", resume_gateway_url: RESUME_URL } },
};
const ack: SessionInput = { type: "frame", frame: { op: 11 } };
const heartbeatDue: SessionInput = { type: "timer", timer: "heartbeat" };
const reconnectDue: SessionInput = { type: "timer", timer: "reconnect" };
const identifyDue: SessionInput = { type: "timer", timer: "identify" };
const heartbeatAsked: SessionInput = { type: "frame", frame: { op: 1 } };
const message = (s: number): SessionInput => ({
  type: "frame",
  frame: { op: 0, t: "MESSAGE_CREATE", s, d: { id: `m${s}` } },
});
const closed = (code: number): SessionInput => ({ type: "closed", code });
/** The IDENTIFY slot, `GET /gateway/bot`, the connection's HELLO: what every fresh session goes through. */
const identified: SessionInput[] = [slot(0), gatewayBot(), hello];
const connected: SessionInput[] = [start, ...identified, ready];
const saved: SavedSession = { sessionId: "sess-1", resumeUrl: RESUME_URL, seq: 1 };

function run(
  inputs: SessionInput[],
  random = 0.25,
  from: SavedSession | null = null,
  shard: [number, number] = [0, 1],
) {
  let state: SessionState = initialSession(from);
  let actions: SessionAction[] = [];
  for (const input of inputs) ({ state, actions } = step(state, input, config(random, shard)));
  return { state, actions };
}

const identifyAs = (shard: [number, number]): SessionAction => ({
  type: "send",
  frame: {
    op: 2,
    d: {
      token: "bot-token",
      intents: RELAY_INTENTS,
      shard,
      properties: { os: "workers", browser: "platform", device: "platform" },
    },
  },
});
const identify = identifyAs([0, 1]);
const cancelTimers: SessionAction[] = [
  { type: "cancel", timer: "heartbeat" },
  { type: "cancel", timer: "identify" },
];
const takeSlot: SessionAction = { type: "takeIdentifySlot", key: 0 };
const healthy: SessionAction = { type: "health", problem: null };
const resume = (seq: number): SessionAction => ({
  type: "send",
  frame: { op: 6, d: { token: "bot-token", session_id: "sess-1", seq } },
});
const reconnectIn = (inMS: number): SessionAction => ({ type: "schedule", timer: "reconnect", inMS });
const resumableClose = (reason: string): SessionAction => ({ type: "close", code: 4000, reason });

describe("gateway session", () => {
  const cases: [string, SessionInput[], SessionAction[], Partial<SessionState>?, SavedSession?][] = [
    ["start without a session takes an IDENTIFY slot first", [start], [takeSlot], { phase: "pacing" }],
    ["the slot is taken: ask again when it frees", [start, slot(3000), identifyDue], [takeSlot], { phase: "pacing" }],
    [
      "the slot is ours: ask GET /gateway/bot",
      [start, slot(3000), identifyDue, slot(0)],
      [{ type: "fetchGateway" }],
      { phase: "preflight" },
    ],
    [
      "its answer: connect to the gateway URL it names",
      [start, slot(0), gatewayBot()],
      [{ type: "connect", url: GATEWAY }],
      { phase: "connecting", resuming: false, gatewayUrl: GATEWAY },
    ],
    [
      "start with a saved session connects to its resume URL (a RESUME spends no session start, needs no slot)",
      [start],
      [{ type: "connect", url: RESUME_URL }],
      { resuming: true },
      saved,
    ],
    [
      "HELLO → first heartbeat after interval × jitter, IDENTIFY with token, intents, shard",
      [start, ...identified],
      [{ type: "schedule", timer: "heartbeat", inMS: 50 }, identify],
      { phase: "handshaking", heartbeatIntervalMS: INTERVAL },
    ],
    [
      "no session starts left: no connection, the health says why, and it asks again after reset_after",
      [start, slot(0), gatewayBot({ remaining: 0, resetAfterMS: 7_200_000 })],
      [
        { type: "health", problem: sessionStartsUsedUp({ ...LIMIT, remaining: 0, resetAfterMS: 7_200_000 }) },
        { type: "schedule", timer: "reconnect", inMS: 7_200_000 },
      ],
      { phase: "backoff", problem: sessionStartsUsedUp({ ...LIMIT, remaining: 0, resetAfterMS: 7_200_000 }) },
    ],
    [
      "fewer starts left than shards may IDENTIFY at once (max_concurrency) counts as none left",
      [start, slot(0), gatewayBot({ remaining: 15, maxConcurrency: 16 })],
      [
        { type: "health", problem: sessionStartsUsedUp({ ...LIMIT, remaining: 15, maxConcurrency: 16 }) },
        { type: "schedule", timer: "reconnect", inMS: LIMIT.resetAfterMS },
      ],
    ],
    [
      "after reset_after it takes a slot and asks GET /gateway/bot again (the socket stays shut)",
      [start, slot(0), gatewayBot({ remaining: 0 }), reconnectDue, slot(0)],
      [{ type: "fetchGateway" }],
    ],
    [
      "a start while waiting for the session starts does not cut the wait short",
      [start, slot(0), gatewayBot({ remaining: 0 }), start],
      [],
      { phase: "backoff" },
    ],
    [
      "GET /gateway/bot failing is a failed connection: backoff",
      [start, slot(0), { type: "gatewayFailed", tokenRefused: false, reason: "HTTP 502" }],
      [...cancelTimers, reconnectIn(250)],
      { phase: "backoff", failures: 1 },
    ],
    [
      "GET /gateway/bot refusing the token stops the relay with the fix, and retries in 10 minutes",
      [start, slot(0), { type: "gatewayFailed", tokenRefused: true, reason: "401: Unauthorized" }],
      [
        ...cancelTimers,
        { type: "stopped", code: 401, reason: "401: Unauthorized" },
        { type: "health", problem: tokenRefused("401: Unauthorized") },
        reconnectIn(STOPPED_RETRY_MS),
      ],
      { phase: "stopped" },
    ],
    [
      "HELLO with a saved session → RESUME with its id and sequence",
      [start, hello],
      [{ type: "schedule", timer: "heartbeat", inMS: 50 }, resume(1)],
      undefined,
      saved,
    ],
    [
      "READY stores the session id and resume URL and clears the health",
      connected,
      [{ type: "persist", saved }, healthy],
      { phase: "ready", sessionId: "sess-1", resumeUrl: RESUME_URL, seq: 1, problem: null },
    ],
    [
      "a dispatch is handed on with its sequence, which is saved",
      [...connected, message(2)],
      [
        { type: "dispatch", event: "MESSAGE_CREATE", data: { id: "m2" }, seq: 2, sessionId: "sess-1" },
        { type: "persist", saved: { ...saved, seq: 2 } },
      ],
      { seq: 2 },
    ],
    [
      "a heartbeat carries the last sequence and the next is scheduled one interval later",
      [...connected, message(2), heartbeatDue],
      [
        { type: "send", frame: { op: 1, d: 2 } },
        { type: "schedule", timer: "heartbeat", inMS: INTERVAL },
      ],
      { awaitingAck: true },
    ],
    [
      "an ACK clears the wait, so the next heartbeat is sent as usual",
      [...connected, heartbeatDue, ack, heartbeatDue],
      [
        { type: "send", frame: { op: 1, d: 1 } },
        { type: "schedule", timer: "heartbeat", inMS: INTERVAL },
      ],
    ],
    [
      "a missed ACK is a zombie connection: close it resumably and reconnect",
      [...connected, heartbeatDue, heartbeatDue],
      [...cancelTimers, resumableClose("heartbeat ACK missed"), reconnectIn(250)],
      { phase: "backoff", failures: 1, sessionId: "sess-1" },
    ],
    [
      "after the zombie, the reconnect goes to the resume URL",
      [...connected, heartbeatDue, heartbeatDue, reconnectDue],
      [{ type: "connect", url: RESUME_URL }],
      { resuming: true },
    ],
    [
      "the gateway asking for a heartbeat (op 1) gets one at once, which expects its ACK by one interval later",
      [...connected, heartbeatAsked],
      [
        { type: "send", frame: { op: 1, d: 1 } },
        { type: "schedule", timer: "heartbeat", inMS: INTERVAL },
      ],
      { awaitingAck: true },
    ],
    [
      "an asked heartbeat without its ACK is a zombie connection like any other",
      [...connected, heartbeatAsked, heartbeatDue],
      [...cancelTimers, resumableClose("heartbeat ACK missed"), reconnectIn(250)],
      { phase: "backoff" },
    ],
    [
      "an asked heartbeat while one is awaited keeps that one's deadline",
      [...connected, heartbeatDue, heartbeatAsked],
      [{ type: "send", frame: { op: 1, d: 1 } }],
      { awaitingAck: true },
    ],
    [
      "an asked heartbeat's ACK clears the wait",
      [...connected, heartbeatAsked, ack, heartbeatDue],
      [
        { type: "send", frame: { op: 1, d: 1 } },
        { type: "schedule", timer: "heartbeat", inMS: INTERVAL },
      ],
    ],
    [
      "a drop keeps the session and reconnects after the backoff",
      [...connected, closed(1006)],
      [...cancelTimers, reconnectIn(250)],
      { phase: "backoff", failures: 1, sessionId: "sess-1" },
    ],
    [
      "after a drop, HELLO → RESUME from the last sequence",
      [...connected, message(2), message(3), closed(1006), reconnectDue, hello],
      [{ type: "schedule", timer: "heartbeat", inMS: 50 }, resume(3)],
    ],
    [
      "RESUMED makes it ready and resets the failures",
      [...connected, closed(1006), reconnectDue, hello, { type: "frame", frame: { op: 0, t: "RESUMED", s: 2 } }],
      [{ type: "persist", saved: { ...saved, seq: 2 } }],
      { phase: "ready", failures: 0 },
    ],
    [
      "a start while waiting to reconnect does not cut the wait short",
      [...connected, closed(1006), start],
      [],
      { phase: "backoff" },
    ],
    [
      "RECONNECT (op 7): close resumably and reconnect at once",
      [...connected, { type: "frame", frame: { op: 7 } }],
      [...cancelTimers, resumableClose("RECONNECT asked by the gateway"), reconnectIn(0)],
      { sessionId: "sess-1" },
    ],
    [
      "INVALID_SESSION resumable (d = true): close and RESUME after a backoff",
      [...connected, { type: "frame", frame: { op: 9, d: true } }],
      [...cancelTimers, resumableClose("INVALID_SESSION (resumable)"), reconnectIn(250)],
      { failures: 1, sessionId: "sess-1" },
    ],
    [
      "after it, HELLO → RESUME",
      [...connected, { type: "frame", frame: { op: 9, d: true } }, reconnectDue, hello],
      [{ type: "schedule", timer: "heartbeat", inMS: 50 }, resume(1)],
    ],
    [
      "INVALID_SESSION not resumable: forget the session, wait 1–5 s, then IDENTIFY",
      [...connected, { type: "frame", frame: { op: 9, d: false } }],
      [
        { type: "persist", saved: { sessionId: null, resumeUrl: null, seq: null } },
        ...cancelTimers,
        resumableClose("INVALID_SESSION"),
        reconnectIn(2000),
      ],
      { sessionId: null, seq: null, failures: 1 },
    ],
    [
      "after a non-resumable INVALID_SESSION the relay takes a slot (then asks GET /gateway/bot) before it IDENTIFYs",
      [...connected, { type: "frame", frame: { op: 9, d: false } }, reconnectDue],
      [takeSlot],
    ],
    [
      "… and IDENTIFYs on the new connection",
      [...connected, { type: "frame", frame: { op: 9, d: false } }, reconnectDue, ...identified],
      [{ type: "schedule", timer: "heartbeat", inMS: 50 }, identify],
    ],
    [
      "a session-ending close (4009 timed out) forgets the session",
      [...connected, closed(4009)],
      [{ type: "persist", saved: { sessionId: null, resumeUrl: null, seq: null } }, ...cancelTimers, reconnectIn(250)],
    ],
    [
      "4007 (invalid seq on RESUME) forgets the session, so the next connection IDENTIFYs",
      [start, hello, closed(4007), reconnectDue],
      [takeSlot],
      { sessionId: null },
      saved,
    ],
    [
      "a fatal close (4004 authentication failed) stops the relay, reports it and retries in 10 minutes",
      [...connected, { type: "closed", code: 4004, reason: "Authentication failed." }],
      [
        { type: "persist", saved: { sessionId: null, resumeUrl: null, seq: null } },
        ...cancelTimers,
        { type: "stopped", code: 4004, reason: "Authentication failed." },
        { type: "health", problem: problemForClose(4004, "Authentication failed.") },
        reconnectIn(STOPPED_RETRY_MS),
      ],
      { phase: "stopped", stoppedBy: { code: 4004, reason: "Authentication failed." } },
    ],
    [
      "close 4014 (disallowed intents) names the Message Content intent as the fix",
      [start, ...identified, { type: "closed", code: 4014, reason: "Disallowed intent(s)." }],
      [
        ...cancelTimers,
        { type: "stopped", code: 4014, reason: "Disallowed intent(s)." },
        { type: "health", problem: problemForClose(4014, "Disallowed intent(s).") },
        reconnectIn(STOPPED_RETRY_MS),
      ],
      { phase: "stopped", problem: problemForClose(4014, "Disallowed intent(s).") },
    ],
    [
      "a stopped relay ignores frames, heartbeats and starts: only its retry revives it",
      [...connected, closed(4014), message(9), heartbeatDue, start],
      [],
      { phase: "stopped", seq: null },
    ],
    [
      "the retry, 10 minutes later, takes a slot, asks GET /gateway/bot and connects again to IDENTIFY",
      [...connected, closed(4014), reconnectDue, slot(0), gatewayBot()],
      [{ type: "connect", url: GATEWAY }],
      { phase: "connecting", resuming: false },
    ],
    [
      "READY after a stop clears the health and the stop",
      [start, ...identified, closed(4014), reconnectDue, ...identified, ready],
      [{ type: "persist", saved }, healthy],
      { phase: "ready", stoppedBy: null, problem: null },
    ],
    [
      "a sequence never goes back",
      [...connected, message(5), { type: "frame", frame: { op: 0, t: "TYPING_START", s: 4, d: {} } }],
      [
        { type: "dispatch", event: "TYPING_START", data: {}, seq: 4, sessionId: "sess-1" },
        { type: "persist", saved: { ...saved, seq: 5 } },
      ],
      { seq: 5 },
    ],
  ];

  it.each(cases)("%s", (_name, inputs, actions, state, from) => {
    const result = run(inputs, 0.25, from ?? null);
    expect(result.actions).toEqual(actions);
    if (state) expect(result.state).toMatchObject(state);
  });

  it("shard 3 of 4 takes the slot of key 3 % max_concurrency (the last GET /gateway/bot's; 1 at first) and IDENTIFYs as [3, 4]", () => {
    const shard3 = (inputs: SessionInput[]) => run(inputs, 0.25, null, [3, 4]).actions;
    expect(shard3([start])).toEqual([{ type: "takeIdentifySlot", key: 0 }]);
    const retry = (maxConcurrency: number): SessionInput[] => [
      start,
      slot(0),
      gatewayBot({ maxConcurrency }),
      hello,
      { type: "frame", frame: { op: 9, d: false } },
      reconnectDue,
    ];
    expect(shard3(retry(2))).toEqual([{ type: "takeIdentifySlot", key: 1 }]);
    expect(shard3(retry(16))).toEqual([{ type: "takeIdentifySlot", key: 3 }]);
    expect(shard3([start, ...identified])).toContainEqual(identifyAs([3, 4]));
  });

  it("INVALID_SESSIONs in a row (no READY between) wait like drops: 1–5 s at first, then longer, reset by READY", () => {
    let inputs: SessionInput[] = [start, ...identified];
    const waits: number[] = [];
    for (let i = 0; i < 6; i++) {
      inputs = [...inputs, { type: "frame", frame: { op: 9, d: false } }];
      const schedule = run(inputs, 0.999).actions.find((a) => a.type === "schedule");
      waits.push((schedule as { inMS: number }).inMS);
      inputs = [...inputs, reconnectDue, ...identified];
    }
    expect(waits).toEqual([4996, 4996, 4996, 7992, 15984, 31968]);
    const afterReady = run([...inputs, ready, { type: "frame", frame: { op: 9, d: false } }], 0.999);
    expect(afterReady.actions.find((a) => a.type === "schedule")).toEqual(reconnectIn(4996));
  });

  it("the backoff doubles with each failure in a row, up to a minute (full jitter)", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => backoffMS(n, 0.999999))).toEqual([
      999, 1999, 3999, 7999, 15999, 31999, 59999, 59999,
    ]);
    expect(backoffMS(3, 0)).toBe(0);
    // Drops in a row (never READY in between) wait longer each time.
    let inputs: SessionInput[] = [...connected];
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      inputs = [...inputs, closed(1006)];
      const schedule = run(inputs, 0.5).actions.find((a) => a.type === "schedule");
      waits.push((schedule as { inMS: number }).inMS);
      inputs = [...inputs, reconnectDue];
    }
    expect(waits).toEqual([500, 1000, 2000, 4000]);
  });

  it.each([
    ["111111111111111111", 1, 0],
    // 29372473 = 7 << 22 | 12345: shard 7 mod n.
    ["29372473", 4, 3],
    ["29372473", 2, 1],
    ["4194303", 2, 0],
  ] as const)("shardFor(%s, %i) = %i", (guild, shards, shard) => {
    expect(shardFor(guild, shards)).toBe(shard);
  });
});
