// The Gateway protocol as a pure state machine, table-driven: each row is
// what happened so far, then one input, and the actions it must produce.
import { describe, expect, it } from "vitest";
import { RELAY_INTENTS, shardFor } from "#src/plugins/chatserver/gatewayRelay/gatewayProtocol.ts";
import {
  backoffMs,
  initialSession,
  step,
  type SavedSession,
  type SessionAction,
  type SessionConfig,
  type SessionInput,
  type SessionState,
} from "#src/plugins/chatserver/gatewayRelay/gatewaySession.ts";

const GATEWAY = "wss://gateway.test";
const RESUME_URL = "wss://resume.gateway.test";
const INTERVAL = 200;

const config = (random = 0.25): SessionConfig => ({
  token: "bot-token",
  intents: RELAY_INTENTS,
  shard: [0, 1],
  random: () => random,
});

const start: SessionInput = { type: "start", gatewayUrl: GATEWAY };
const hello: SessionInput = { type: "frame", frame: { op: 10, d: { heartbeat_interval: INTERVAL } } };
const ready: SessionInput = {
  type: "frame",
  frame: { op: 0, t: "READY", s: 1, d: { session_id: "sess-1", resume_gateway_url: RESUME_URL } },
};
const ack: SessionInput = { type: "frame", frame: { op: 11 } };
const heartbeatDue: SessionInput = { type: "timer", timer: "heartbeat" };
const reconnectDue: SessionInput = { type: "timer", timer: "reconnect" };
const message = (s: number): SessionInput => ({
  type: "frame",
  frame: { op: 0, t: "MESSAGE_CREATE", s, d: { id: `m${s}` } },
});
const closed = (code: number): SessionInput => ({ type: "closed", code });
const connected: SessionInput[] = [start, hello, ready];
const saved: SavedSession = { sessionId: "sess-1", resumeUrl: RESUME_URL, seq: 1 };

function run(inputs: SessionInput[], random = 0.25, from: SavedSession | null = null) {
  let state: SessionState = initialSession(from);
  let actions: SessionAction[] = [];
  for (const input of inputs) ({ state, actions } = step(state, input, config(random)));
  return { state, actions };
}

const identify: SessionAction = {
  type: "send",
  frame: {
    op: 2,
    d: {
      token: "bot-token",
      intents: RELAY_INTENTS,
      shard: [0, 1],
      properties: { os: "workers", browser: "platform", device: "platform" },
    },
  },
};
const resume = (seq: number): SessionAction => ({
  type: "send",
  frame: { op: 6, d: { token: "bot-token", session_id: "sess-1", seq } },
});
const reconnectIn = (inMs: number): SessionAction => ({ type: "schedule", timer: "reconnect", inMs });
const resumableClose = (reason: string): SessionAction => ({ type: "close", code: 4000, reason });

describe("gateway session", () => {
  const cases: [string, SessionInput[], SessionAction[], Partial<SessionState>?, SavedSession?][] = [
    ["start without a session connects to the gateway URL", [start], [{ type: "connect", url: GATEWAY }]],
    [
      "start with a saved session connects to its resume URL",
      [start],
      [{ type: "connect", url: RESUME_URL }],
      { resuming: true },
      saved,
    ],
    [
      "HELLO → first heartbeat after interval × jitter, IDENTIFY with token, intents, shard",
      [start, hello],
      [{ type: "schedule", timer: "heartbeat", inMs: 50 }, identify],
      { phase: "handshaking", heartbeatIntervalMs: INTERVAL },
    ],
    [
      "HELLO with a saved session → RESUME with its id and sequence",
      [start, hello],
      [{ type: "schedule", timer: "heartbeat", inMs: 50 }, resume(1)],
      undefined,
      saved,
    ],
    [
      "READY stores the session id and resume URL",
      connected,
      [{ type: "persist", saved }],
      { phase: "ready", sessionId: "sess-1", resumeUrl: RESUME_URL, seq: 1 },
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
        { type: "schedule", timer: "heartbeat", inMs: INTERVAL },
      ],
      { awaitingAck: true },
    ],
    [
      "an ACK clears the wait, so the next heartbeat is sent as usual",
      [...connected, heartbeatDue, ack, heartbeatDue],
      [
        { type: "send", frame: { op: 1, d: 1 } },
        { type: "schedule", timer: "heartbeat", inMs: INTERVAL },
      ],
    ],
    [
      "a missed ACK is a zombie connection: close it resumably and reconnect",
      [...connected, heartbeatDue, heartbeatDue],
      [{ type: "cancel", timer: "heartbeat" }, resumableClose("heartbeat ACK missed"), reconnectIn(250)],
      { phase: "backoff", failures: 1, sessionId: "sess-1" },
    ],
    [
      "after the zombie, the reconnect goes to the resume URL",
      [...connected, heartbeatDue, heartbeatDue, reconnectDue],
      [{ type: "connect", url: RESUME_URL }],
      { resuming: true },
    ],
    [
      "the gateway asking for a heartbeat (op 1) gets one at once, schedule unchanged",
      [...connected, { type: "frame", frame: { op: 1 } }],
      [{ type: "send", frame: { op: 1, d: 1 } }],
    ],
    [
      "a drop keeps the session and reconnects after the backoff",
      [...connected, closed(1006)],
      [{ type: "cancel", timer: "heartbeat" }, reconnectIn(250)],
      { phase: "backoff", failures: 1, sessionId: "sess-1" },
    ],
    [
      "after a drop, HELLO → RESUME from the last sequence",
      [...connected, message(2), message(3), closed(1006), reconnectDue, hello],
      [{ type: "schedule", timer: "heartbeat", inMs: 50 }, resume(3)],
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
      [{ type: "cancel", timer: "heartbeat" }, resumableClose("RECONNECT asked by the gateway"), reconnectIn(0)],
      { sessionId: "sess-1" },
    ],
    [
      "INVALID_SESSION resumable (d = true): close and RESUME at once",
      [...connected, { type: "frame", frame: { op: 9, d: true } }, reconnectDue, hello],
      [{ type: "schedule", timer: "heartbeat", inMs: 50 }, resume(1)],
    ],
    [
      "INVALID_SESSION not resumable: forget the session, wait 1–5 s, then IDENTIFY",
      [...connected, { type: "frame", frame: { op: 9, d: false } }],
      [
        { type: "persist", saved: { sessionId: null, resumeUrl: null, seq: null } },
        { type: "cancel", timer: "heartbeat" },
        resumableClose("INVALID_SESSION"),
        reconnectIn(2000),
      ],
      { sessionId: null, seq: null },
    ],
    [
      "after a non-resumable INVALID_SESSION the new connection IDENTIFYs at the gateway URL",
      [...connected, { type: "frame", frame: { op: 9, d: false } }, reconnectDue, hello],
      [{ type: "schedule", timer: "heartbeat", inMs: 50 }, identify],
    ],
    [
      "a session-ending close (4009 timed out) forgets the session",
      [...connected, closed(4009)],
      [
        { type: "persist", saved: { sessionId: null, resumeUrl: null, seq: null } },
        { type: "cancel", timer: "heartbeat" },
        reconnectIn(250),
      ],
    ],
    [
      "a fatal close (4004 authentication failed) stops the relay",
      [...connected, { type: "closed", code: 4004, reason: "Authentication failed." }],
      [
        { type: "cancel", timer: "heartbeat" },
        { type: "cancel", timer: "reconnect" },
        { type: "stopped", code: 4004, reason: "Authentication failed." },
      ],
      { phase: "stopped", stoppedBy: { code: 4004, reason: "Authentication failed." } },
    ],
    [
      "a stopped relay ignores frames and timers",
      [...connected, closed(4014), message(9), heartbeatDue, reconnectDue],
      [],
      { phase: "stopped", seq: 1 },
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

  it("the backoff doubles with each failure in a row, up to a minute (full jitter)", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => backoffMs(n, 0.999999))).toEqual([
      999, 1999, 3999, 7999, 15999, 31999, 59999, 59999,
    ]);
    expect(backoffMs(3, 0)).toBe(0);
    // Drops in a row (never READY in between) wait longer each time.
    let inputs: SessionInput[] = [...connected];
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      inputs = [...inputs, closed(1006)];
      const schedule = run(inputs, 0.5).actions.find((a) => a.type === "schedule");
      waits.push((schedule as { inMs: number }).inMs);
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
