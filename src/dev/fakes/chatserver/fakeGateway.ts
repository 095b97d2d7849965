/**
 * The fake chat server's Gateway (Discord's WebSocket protocol, v10 JSON):
 * HELLO with a configurable heartbeat interval, heartbeat ACKs, IDENTIFY →
 * READY with a session id and resume URL, sequence numbers on every dispatch,
 * RESUME replaying what the session missed (then RESUMED). It refuses what
 * the provider refuses (gateway.mdx, opcodes-and-status-codes.mdx):
 *   IDENTIFY   wrong token 4004; a second one 4005; intents not a number or
 *              with an undefined bit 4013; shard not `[id, n]` with
 *              0 <= id < n 4010; a privileged intent not enabled for the bot
 *              (`privilegedIntents`, the portal's toggles; MESSAGE_CONTENT
 *              only by default) 4014; one more IDENTIFY than
 *              `session_start_limit.remaining` ends every session of the bot
 *              (4004) and resets its token, as the provider does; a second
 *              IDENTIFY of the same rate-limit key (`shard % max_concurrency`)
 *              within 5 s gets INVALID_SESSION (false)
 *   RESUME     wrong token 4004; unknown session INVALID_SESSION (false); a
 *              `seq` beyond the session's 4007 (the session ends)
 *   heartbeats a connection that sent none for `heartbeat_interval` × 1.25
 *              since HELLO or its last one is closed (resumably: the
 *              provider says "you will be forced to Resume")
 *   op 3       presence updates are accepted when well-formed (4001 when not)
 *   other ops  before IDENTIFY 4003, unknown 4001, undecodable 4002
 * Messages and reactions are published to every session, live or not: a
 * session without a socket keeps them until it RESUMEs (the real Gateway does
 * the same within its resume window).
 *
 * Test hooks (the fake's `/__fake/gateway/*` routes call them):
 *   drop()                    close every live socket resumably (4000), as a network drop would
 *   reconnect()               send RECONNECT (op 7)
 *   invalidSession(resumable) send INVALID_SESSION (op 9, d = resumable); not resumable forgets the sessions
 *   withholdAcks()            the sockets live now stop ACKing heartbeats (a zombie connection); new ones ACK
 *   requestHeartbeat()        send a heartbeat request (op 1) to every live socket
 *   setPrivilegedIntents(mask)  the portal's toggles: which privileged intents the bot may ask for
 *   setSessionStartLimit({ remaining?, resetAfterMS?, maxConcurrency?, total? })
 * Sockets are WebSocketPair ends: they must live in one I/O context, so the
 * worker serves the fake from an actor (index.ts). Time (`now`, `timers`) is
 * injected, so tests move a clock instead of waiting.
 */
import { randomHex } from "../../../core/crypto/encoding.ts";
import {
  GATEWAY_INTENTS,
  GATEWAY_OP,
  type GatewayFrame,
  IDENTIFY_WINDOW_MS,
  identifyKey,
  KNOWN_INTENTS,
  parseFrame,
  PRIVILEGED_INTENTS,
} from "../../../plugins/chatserver/gatewayRelay/gatewayProtocol.ts";

export const DEFAULT_HEARTBEAT_INTERVAL_MS = 41_250;
/** How much later than `heartbeat_interval` a heartbeat may come (the provider's "tolerance"; its value is not documented). */
export const HEARTBEAT_TOLERANCE = 1.25;
/** How many dispatches a session keeps for RESUME. */
const SESSION_LOG_LIMIT = 1000;
const IDENTIFY_DAILY_LIMIT = 1000;
const DAY_MS = 86_400_000;
const PRESENCE_STATUSES = new Set(["online", "dnd", "idle", "invisible", "offline"]);

export interface FakeGatewayTimers {
  set(run: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

export interface FakeGatewayConfig {
  /** Where the fake is reachable over http(s); the Gateway URL is its ws(s) form + `/gateway`. */
  baseUrl: string;
  botToken: string;
  applicationId: string;
  heartbeatIntervalMS?: number;
  /** The privileged intents enabled for the bot at the "portal" (default: MESSAGE_CONTENT only). */
  privilegedIntents?: number;
  /** `session_start_limit.max_concurrency` (default 1). */
  maxConcurrency?: number;
  now?: () => number;
  timers?: FakeGatewayTimers;
}

interface Session {
  id: string;
  seq: number;
  log: { op: number; t: string; s: number; d: unknown }[];
  socket: Connection | null;
  shard: [number, number];
}

interface Connection {
  socket: WebSocket;
  session: Session | null;
  acks: boolean;
  /** The timer that closes the connection when no heartbeat comes in time. */
  deadline: unknown;
}

export interface GatewayEventRecord {
  kind:
    | "connected"
    | "identify"
    | "resume"
    | "heartbeat"
    | "heartbeat-requested"
    | "presence"
    | "invalid-session"
    | "token-reset"
    | "closed";
  sessionId?: string;
  seq?: number | null;
  code?: number;
  /** For `closed`: who closed the connection. */
  by?: "client" | "gateway";
  status?: string;
}

const systemTimers: FakeGatewayTimers = {
  set: (run, ms) => setTimeout(run, ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

const isShard = (value: unknown): value is [number, number] =>
  Array.isArray(value) &&
  value.length === 2 &&
  value.every((n) => Number.isInteger(n)) &&
  value[1] >= 1 &&
  value[0] >= 0 &&
  value[0] < value[1];

/** Intents by their names (`GATEWAY_INTENTS` keys), for the test switch. */
export function privilegedIntentsNamed(names: unknown): number | null {
  if (!Array.isArray(names)) return null;
  let mask = 0;
  for (const name of names) {
    const bit = GATEWAY_INTENTS[name as keyof typeof GATEWAY_INTENTS];
    if (bit === undefined || (bit & PRIVILEGED_INTENTS) === 0) return null;
    mask |= bit;
  }
  return mask;
}

export function createFakeGateway(config: FakeGatewayConfig) {
  const url = `${config.baseUrl.replace(/\/+$/, "").replace(/^http/, "ws")}/gateway`;
  const now = config.now ?? Date.now;
  const timers = config.timers ?? systemTimers;
  let heartbeatIntervalMS = config.heartbeatIntervalMS ?? DEFAULT_HEARTBEAT_INTERVAL_MS;
  let privilegedIntents = config.privilegedIntents ?? GATEWAY_INTENTS.MESSAGE_CONTENT;
  let sessions = new Map<string, Session>();
  let connections = new Set<Connection>();
  let identifies = 0;
  let events: GatewayEventRecord[] = [];
  let tokenReset = false;
  /** The 24-hour window of session starts: when it began and how many it spent. */
  let limit = {
    total: IDENTIFY_DAILY_LIMIT,
    used: 0,
    windowStart: now(),
    maxConcurrency: config.maxConcurrency ?? 1,
  };
  /** The last IDENTIFY per rate-limit key. */
  let lastIdentify = new Map<number, number>();

  function currentLimit() {
    if (now() >= limit.windowStart + DAY_MS) limit = { ...limit, used: 0, windowStart: now() };
    return {
      total: limit.total,
      remaining: Math.max(0, limit.total - limit.used),
      reset_after: limit.windowStart + DAY_MS - now(),
      max_concurrency: limit.maxConcurrency,
    };
  }

  const send = (connection: Connection, frame: GatewayFrame) => {
    try {
      connection.socket.send(JSON.stringify(frame));
    } catch {
      // the socket is closing; the session keeps the event for RESUME
    }
  };
  const close = (connection: Connection, code: number, reason: string) => {
    if (!connections.has(connection)) return;
    events.push({
      kind: "closed",
      code,
      by: "gateway",
      ...(connection.session ? { sessionId: connection.session.id } : {}),
    });
    detach(connection);
    try {
      connection.socket.close(code, reason);
    } catch {
      // already closed
    }
  };
  function detach(connection: Connection) {
    connections.delete(connection);
    timers.clear(connection.deadline);
    if (connection.session?.socket === connection) connection.session.socket = null;
  }
  /** (Re)arms the close of a connection that stops heartbeating. */
  function expectHeartbeat(connection: Connection) {
    timers.clear(connection.deadline);
    connection.deadline = timers.set(
      () => close(connection, 4000, "Heartbeat timed out."),
      Math.ceil(heartbeatIntervalMS * HEARTBEAT_TOLERANCE),
    );
  }

  function dispatch(session: Session, t: string, d: unknown) {
    const frame = { op: GATEWAY_OP.DISPATCH, t, s: ++session.seq, d };
    session.log.push(frame);
    if (session.log.length > SESSION_LOG_LIMIT) session.log.shift();
    if (session.socket) send(session.socket, frame);
    return frame;
  }

  /** The provider's answer to one IDENTIFY past the session start limit: every session ends, the token is reset. */
  function resetToken() {
    tokenReset = true;
    events.push({ kind: "token-reset" });
    for (const connection of [...connections]) close(connection, 4004, "Authentication failed.");
    sessions = new Map();
  }

  function onIdentify(connection: Connection, frame: GatewayFrame) {
    const d = (frame.d ?? {}) as { token?: unknown; intents?: unknown; shard?: unknown };
    if (connection.session) return close(connection, 4005, "Already authenticated.");
    if (d.token !== config.botToken || tokenReset) return close(connection, 4004, "Authentication failed.");
    const intents = d.intents;
    if (typeof intents !== "number" || !Number.isInteger(intents) || intents < 0 || (intents & ~KNOWN_INTENTS) !== 0)
      return close(connection, 4013, "Invalid intent(s).");
    const shard = d.shard ?? [0, 1];
    if (!isShard(shard)) return close(connection, 4010, "Invalid shard.");
    if ((intents & PRIVILEGED_INTENTS & ~privilegedIntents) !== 0)
      return close(connection, 4014, "Disallowed intent(s).");
    if (currentLimit().remaining === 0) return resetToken();
    const key = identifyKey(shard[0], limit.maxConcurrency);
    const last = lastIdentify.get(key);
    if (last !== undefined && now() - last < IDENTIFY_WINDOW_MS) {
      events.push({ kind: "invalid-session" });
      return send(connection, { op: GATEWAY_OP.INVALID_SESSION, d: false });
    }
    lastIdentify.set(key, now());
    limit.used++;
    identifies++;
    const session: Session = { id: randomHex(16), seq: 0, log: [], socket: connection, shard };
    sessions.set(session.id, session);
    connection.session = session;
    events.push({ kind: "identify", sessionId: session.id });
    dispatch(session, "READY", {
      v: 10,
      user: { id: config.applicationId, username: "platform-bot", bot: true },
      guilds: [],
      session_id: session.id,
      resume_gateway_url: url,
      shard: session.shard,
      application: { id: config.applicationId },
    });
  }

  function onResume(connection: Connection, frame: GatewayFrame) {
    const d = (frame.d ?? {}) as { token?: unknown; session_id?: unknown; seq?: unknown };
    if (connection.session) return close(connection, 4005, "Already authenticated.");
    if (d.token !== config.botToken || tokenReset) return close(connection, 4004, "Authentication failed.");
    const session = typeof d.session_id === "string" ? sessions.get(d.session_id) : undefined;
    events.push({ kind: "resume", sessionId: String(d.session_id), seq: typeof d.seq === "number" ? d.seq : null });
    if (!session) return send(connection, { op: GATEWAY_OP.INVALID_SESSION, d: false });
    if (typeof d.seq !== "number" || !Number.isInteger(d.seq) || d.seq < 0 || d.seq > session.seq) {
      // A sequence the session never reached: "Reconnect and start a new session."
      sessions.delete(session.id);
      if (session.socket) close(session.socket, 4007, "Invalid seq.");
      return close(connection, 4007, "Invalid seq.");
    }
    if (session.socket) close(session.socket, 4000, "Resumed elsewhere.");
    session.socket = connection;
    connection.session = session;
    for (const missed of session.log) if (missed.s > d.seq) send(connection, missed);
    dispatch(session, "RESUMED", {});
  }

  function onPresence(connection: Connection, frame: GatewayFrame) {
    const d = frame.d as { since?: unknown; activities?: unknown; status?: unknown; afk?: unknown } | null;
    const valid =
      !!d &&
      typeof d === "object" &&
      (d.since === null || Number.isInteger(d.since)) &&
      Array.isArray(d.activities) &&
      typeof d.status === "string" &&
      PRESENCE_STATUSES.has(d.status) &&
      typeof d.afk === "boolean";
    if (!valid) return close(connection, 4001, "Invalid payload for opcode 3.");
    events.push({ kind: "presence", status: d.status as string, sessionId: connection.session!.id });
  }

  function onFrame(connection: Connection, frame: GatewayFrame) {
    switch (frame.op) {
      case GATEWAY_OP.HEARTBEAT:
        events.push({ kind: "heartbeat", seq: typeof frame.d === "number" ? frame.d : null });
        expectHeartbeat(connection);
        if (connection.acks) send(connection, { op: GATEWAY_OP.HEARTBEAT_ACK });
        return;
      case GATEWAY_OP.IDENTIFY:
        return onIdentify(connection, frame);
      case GATEWAY_OP.RESUME:
        return onResume(connection, frame);
      default:
        if (!connection.session) return close(connection, 4003, "Not authenticated.");
        if (frame.op === GATEWAY_OP.PRESENCE_UPDATE) return onPresence(connection, frame);
        return close(connection, 4001, "Unknown opcode.");
    }
  }

  /** `GET /gateway` with `Upgrade: websocket`. */
  function upgrade(request: Request): Response {
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") {
      return Response.json({ message: "Expected a WebSocket upgrade.", code: 0 }, { status: 426 });
    }
    const query = new URL(request.url).searchParams;
    if (query.get("v") !== "10" || query.get("encoding") !== "json") {
      return Response.json({ message: "Use v=10 and encoding=json.", code: 0 }, { status: 400 });
    }
    const pair = new WebSocketPair();
    const [client, server] = Object.values(pair) as [WebSocket, WebSocket];
    server.accept();
    const connection: Connection = { socket: server, session: null, acks: true, deadline: undefined };
    connections.add(connection);
    events.push({ kind: "connected" });
    server.addEventListener("message", (event) => {
      if (!connections.has(connection)) return;
      const frame = parseFrame(event.data);
      if (!frame) return close(connection, 4002, "Decode error.");
      onFrame(connection, frame);
    });
    server.addEventListener("close", (event) => {
      if (!connections.has(connection)) return; // the gateway closed it (recorded then)
      events.push({
        kind: "closed",
        code: event.code,
        by: "client",
        ...(connection.session ? { sessionId: connection.session.id } : {}),
      });
      detach(connection);
    });
    send(connection, { op: GATEWAY_OP.HELLO, d: { heartbeat_interval: heartbeatIntervalMS } });
    expectHeartbeat(connection);
    return new Response(null, { status: 101, webSocket: client });
  }

  return {
    url,
    upgrade,
    /** `GET /api/v10/gateway/bot`'s answer. */
    gatewayBot: () => ({ url, shards: 1, session_start_limit: currentLimit() }),
    /** Whether one IDENTIFY too many made the "provider" reset the bot token (REST refuses it too). */
    tokenWasReset: () => tokenReset,
    /** Sends (or keeps for RESUME) a dispatch on every session; how many sessions got it and how many were live. */
    publish(t: string, d: unknown): { sessions: number; live: number; seq: number[] } {
      const all = [...sessions.values()];
      const seq = all.map((session) => dispatch(session, t, d).s);
      return { sessions: all.length, live: all.filter((s) => s.socket).length, seq };
    },
    drop() {
      for (const connection of [...connections]) close(connection, 4000, "Dropped by the test switch.");
    },
    reconnect() {
      for (const connection of connections) send(connection, { op: GATEWAY_OP.RECONNECT, d: null });
    },
    invalidSession(resumable: boolean) {
      for (const connection of connections) send(connection, { op: GATEWAY_OP.INVALID_SESSION, d: resumable });
      if (!resumable) sessions = new Map();
    },
    withholdAcks() {
      for (const connection of connections) connection.acks = false;
    },
    requestHeartbeat() {
      for (const connection of connections) {
        events.push({ kind: "heartbeat-requested" });
        send(connection, { op: GATEWAY_OP.HEARTBEAT, d: null });
      }
    },
    setHeartbeatInterval(ms: number) {
      heartbeatIntervalMS = ms;
    },
    setPrivilegedIntents(mask: number) {
      privilegedIntents = mask & PRIVILEGED_INTENTS;
    },
    setSessionStartLimit(change: {
      remaining?: number;
      resetAfterMS?: number;
      maxConcurrency?: number;
      total?: number;
    }) {
      currentLimit();
      if (change.total !== undefined) limit.total = Math.max(1, Math.floor(change.total));
      if (change.remaining !== undefined)
        limit.used = limit.total - Math.max(0, Math.min(limit.total, Math.floor(change.remaining)));
      if (change.resetAfterMS !== undefined) limit.windowStart = now() + Math.max(0, change.resetAfterMS) - DAY_MS;
      if (change.maxConcurrency !== undefined) limit.maxConcurrency = Math.max(1, Math.floor(change.maxConcurrency));
    },
    state: () => ({
      url,
      heartbeatIntervalMS,
      privilegedIntents,
      sessionStartLimit: currentLimit(),
      tokenReset,
      sessions: [...sessions.values()].map((s) => ({ id: s.id, seq: s.seq, live: s.socket !== null })),
      connections: connections.size,
      identifies,
      events,
    }),
    reset() {
      for (const connection of [...connections]) close(connection, 4000, "Fake reset.");
      sessions = new Map();
      connections = new Set();
      identifies = 0;
      events = [];
      tokenReset = false;
      privilegedIntents = config.privilegedIntents ?? GATEWAY_INTENTS.MESSAGE_CONTENT;
      limit = { total: IDENTIFY_DAILY_LIMIT, used: 0, windowStart: now(), maxConcurrency: config.maxConcurrency ?? 1 };
      lastIdentify = new Map();
    },
  };
}

export type FakeGateway = ReturnType<typeof createFakeGateway>;
