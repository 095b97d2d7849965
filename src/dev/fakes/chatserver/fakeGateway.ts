/**
 * The fake chat server's Gateway (Discord's WebSocket protocol, v10 JSON, the
 * part the plugin's relay speaks): HELLO with a configurable heartbeat
 * interval, heartbeat ACKs, IDENTIFY (bot token checked, intents required) →
 * READY with a session id and resume URL, sequence numbers on every dispatch,
 * RESUME replaying what the session missed (then RESUMED), INVALID_SESSION
 * for an unknown session. Messages and reactions are published to every
 * session, live or not: a session without a socket keeps them until it
 * RESUMEs (the real Gateway does the same within its resume window).
 *
 * Test hooks (the fake's `/__fake/gateway/*` routes call them):
 *   drop()                    close every live socket resumably (4000), as a network drop would
 *   reconnect()               send RECONNECT (op 7)
 *   invalidSession(resumable) send INVALID_SESSION (op 9, d = resumable); not resumable forgets the sessions
 *   withholdAcks()            the sockets live now stop ACKing heartbeats (a zombie connection); new ones ACK
 * Sockets are WebSocketPair ends: they must live in one I/O context, so the
 * worker serves the fake from an actor (index.ts).
 */
import { randomHex } from "../../../core/crypto/encoding.ts";
import { GATEWAY_OP, type GatewayFrame, parseFrame } from "../../../plugins/chatserver/gatewayRelay/gatewayProtocol.ts";

export const DEFAULT_HEARTBEAT_INTERVAL_MS = 41_250;
/** How many dispatches a session keeps for RESUME. */
const SESSION_LOG_LIMIT = 1000;
const IDENTIFY_DAILY_LIMIT = 1000;

export interface FakeGatewayConfig {
  /** Where the fake is reachable over http(s); the Gateway URL is its ws(s) form + `/gateway`. */
  baseUrl: string;
  botToken: string;
  applicationId: string;
  heartbeatIntervalMs?: number;
}

interface Session {
  id: string;
  seq: number;
  log: { op: number; t: string; s: number; d: unknown }[];
  socket: Connection | null;
  shard: unknown;
}

interface Connection {
  socket: WebSocket;
  session: Session | null;
  acks: boolean;
}

export interface GatewayEventRecord {
  kind: "connected" | "identify" | "resume" | "heartbeat" | "closed";
  sessionId?: string;
  seq?: number | null;
  code?: number;
}

export function createFakeGateway(config: FakeGatewayConfig) {
  const url = `${config.baseUrl.replace(/\/+$/, "").replace(/^http/, "ws")}/gateway`;
  let heartbeatIntervalMs = config.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS;
  let sessions = new Map<string, Session>();
  let connections = new Set<Connection>();
  let identifies = 0;
  let events: GatewayEventRecord[] = [];

  const send = (connection: Connection, frame: GatewayFrame) => {
    try {
      connection.socket.send(JSON.stringify(frame));
    } catch {
      // the socket is closing; the session keeps the event for RESUME
    }
  };
  const close = (connection: Connection, code: number, reason: string) => {
    detach(connection);
    try {
      connection.socket.close(code, reason);
    } catch {
      // already closed
    }
  };
  function detach(connection: Connection) {
    connections.delete(connection);
    if (connection.session?.socket === connection) connection.session.socket = null;
  }

  function dispatch(session: Session, t: string, d: unknown) {
    const frame = { op: GATEWAY_OP.DISPATCH, t, s: ++session.seq, d };
    session.log.push(frame);
    if (session.log.length > SESSION_LOG_LIMIT) session.log.shift();
    if (session.socket) send(session.socket, frame);
    return frame;
  }

  function onFrame(connection: Connection, frame: GatewayFrame) {
    switch (frame.op) {
      case GATEWAY_OP.HEARTBEAT:
        events.push({ kind: "heartbeat", seq: typeof frame.d === "number" ? frame.d : null });
        if (connection.acks) send(connection, { op: GATEWAY_OP.HEARTBEAT_ACK });
        return;
      case GATEWAY_OP.IDENTIFY: {
        const d = (frame.d ?? {}) as { token?: unknown; intents?: unknown; shard?: unknown };
        if (connection.session) return close(connection, 4005, "Already authenticated.");
        if (d.token !== config.botToken) return close(connection, 4004, "Authentication failed.");
        if (typeof d.intents !== "number") return close(connection, 4013, "Invalid intent(s).");
        identifies++;
        const session: Session = { id: randomHex(16), seq: 0, log: [], socket: connection, shard: d.shard ?? [0, 1] };
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
        return;
      }
      case GATEWAY_OP.RESUME: {
        const d = (frame.d ?? {}) as { token?: unknown; session_id?: unknown; seq?: unknown };
        if (connection.session) return close(connection, 4005, "Already authenticated.");
        if (d.token !== config.botToken) return close(connection, 4004, "Authentication failed.");
        const session = typeof d.session_id === "string" ? sessions.get(d.session_id) : undefined;
        events.push({
          kind: "resume",
          sessionId: String(d.session_id),
          seq: typeof d.seq === "number" ? d.seq : null,
        });
        if (!session) return send(connection, { op: GATEWAY_OP.INVALID_SESSION, d: false });
        if (session.socket) close(session.socket, 4000, "Resumed elsewhere.");
        session.socket = connection;
        connection.session = session;
        const after = typeof d.seq === "number" ? d.seq : 0;
        for (const missed of session.log) if (missed.s > after) send(connection, missed);
        dispatch(session, "RESUMED", {});
        return;
      }
      default:
        if (!connection.session) return close(connection, 4003, "Not authenticated.");
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
    const connection: Connection = { socket: server, session: null, acks: true };
    connections.add(connection);
    events.push({ kind: "connected" });
    server.addEventListener("message", (event) => {
      if (!connections.has(connection)) return;
      const frame = parseFrame(event.data);
      if (!frame) return close(connection, 4002, "Decode error.");
      onFrame(connection, frame);
    });
    server.addEventListener("close", (event) => {
      events.push({
        kind: "closed",
        code: event.code,
        ...(connection.session ? { sessionId: connection.session.id } : {}),
      });
      detach(connection);
    });
    send(connection, { op: GATEWAY_OP.HELLO, d: { heartbeat_interval: heartbeatIntervalMs } });
    return new Response(null, { status: 101, webSocket: client });
  }

  return {
    url,
    upgrade,
    /** `GET /api/v10/gateway/bot`'s answer. */
    gatewayBot: () => ({
      url,
      shards: 1,
      session_start_limit: {
        total: IDENTIFY_DAILY_LIMIT,
        remaining: Math.max(0, IDENTIFY_DAILY_LIMIT - identifies),
        reset_after: 86_400_000,
        max_concurrency: 1,
      },
    }),
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
    setHeartbeatInterval(ms: number) {
      heartbeatIntervalMs = ms;
    },
    state: () => ({
      url,
      heartbeatIntervalMs,
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
    },
  };
}

export type FakeGateway = ReturnType<typeof createFakeGateway>;
