/**
 * The Gateway protocol as a pure state machine: `step(state, input, config)`
 * takes what happened (a frame, a close, a timer) and returns the next state
 * and what to do (connect, send, close, schedule, dispatch, persist). No
 * sockets, no clocks: the relay actor (GatewayRelay.ts, through
 * gatewayConnection.ts) performs the actions; tests drive it table-driven.
 *
 *   connect → HELLO (op 10) → IDENTIFY (op 2), or RESUME (op 6) when a
 *   session is saved → READY (t=READY: session id, resume URL) / RESUMED;
 *   heartbeats (op 1, the last sequence) every `heartbeat_interval`, the first
 *   after `interval × jitter`; an interval without an ACK (op 11) means a
 *   zombie connection: close it and RESUME on a new one. RECONNECT (op 7):
 *   close and RESUME at once. INVALID_SESSION (op 9): RESUME when `d` is
 *   true, else forget the session and IDENTIFY after 1–5 s. A dropped
 *   connection is RESUMEd after a backoff that doubles with each failure in a
 *   row (full jitter, capped); READY / RESUMED resets it. A fatal close (bad
 *   token, intents, shard) stops the relay.
 */
import {
  FATAL_CLOSE_CODES,
  GATEWAY_OP,
  type GatewayFrame,
  RESUMABLE_CLOSE_CODE,
  SESSION_ENDING_CLOSE_CODES,
} from "./gatewayProtocol.ts";

/** What survives an eviction (kept in the actor's storage). */
export interface SavedSession {
  sessionId: string | null;
  resumeUrl: string | null;
  seq: number | null;
}

export type SessionPhase =
  /** Not started (a new actor, or one restarted after eviction). */
  | "idle"
  /** Waiting to reconnect (a `start` does not cut the wait short). */
  | "backoff"
  /** A connection is being opened, or is open and waiting for HELLO. */
  | "connecting"
  /** IDENTIFY or RESUME sent, waiting for READY / RESUMED. */
  | "handshaking"
  | "ready"
  /** A fatal close: only a new `start` revives it. */
  | "stopped";

export interface SessionState extends SavedSession {
  phase: SessionPhase;
  /** Whether the current connection RESUMEs (else IDENTIFYs). */
  resuming: boolean;
  heartbeatIntervalMs: number | null;
  awaitingAck: boolean;
  /** Failed connections in a row (drives the backoff). */
  failures: number;
  /** The last fatal close, for status. */
  stoppedBy: { code: number; reason: string } | null;
  /** Where a fresh IDENTIFY connects (from `GET /gateway/bot`, given at start). */
  gatewayUrl: string | null;
}

export type TimerName = "heartbeat" | "reconnect";

export type SessionInput =
  /** Begin (a poke, an alarm after eviction); `gatewayUrl` from `GET /gateway/bot`. */
  | { type: "start"; gatewayUrl: string }
  | { type: "frame"; frame: GatewayFrame }
  /** The connection closed (or could not be opened: code 1006). */
  | { type: "closed"; code: number; reason?: string }
  | { type: "timer"; timer: TimerName };

export type SessionAction =
  | { type: "connect"; url: string }
  | { type: "send"; frame: GatewayFrame }
  /** Close the current connection; the adapter reports no `closed` for a close it asked for. */
  | { type: "close"; code: number; reason: string }
  | { type: "schedule"; timer: TimerName; inMs: number }
  | { type: "cancel"; timer: TimerName }
  | { type: "dispatch"; event: string; data: unknown; seq: number; sessionId: string | null }
  | { type: "persist"; saved: SavedSession }
  | { type: "stopped"; code: number; reason: string };

export interface SessionConfig {
  token: string;
  intents: number;
  shard: [number, number];
  /** A number in [0, 1): the heartbeat's first jitter and the backoff's. Injected so tests are exact. */
  random: () => number;
}

export const BACKOFF_BASE_MS = 1000;
export const BACKOFF_MAX_MS = 60_000;
/** After a non-resumable INVALID_SESSION the provider asks for a 1–5 s wait before IDENTIFY. */
export const INVALID_SESSION_MIN_WAIT_MS = 1000;
export const INVALID_SESSION_WAIT_SPREAD_MS = 4000;

/** The wait before reconnect attempt number `failures` (1 = the first): full jitter over base × 2^(failures-1), capped. */
export function backoffMs(failures: number, random: number): number {
  const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, failures - 1));
  return Math.floor(ceiling * random);
}

export function initialSession(saved: SavedSession | null = null): SessionState {
  return {
    sessionId: saved?.sessionId ?? null,
    resumeUrl: saved?.resumeUrl ?? null,
    seq: saved?.seq ?? null,
    phase: "idle",
    resuming: false,
    heartbeatIntervalMs: null,
    awaitingAck: false,
    failures: 0,
    stoppedBy: null,
    gatewayUrl: null,
  };
}

export interface Step {
  state: SessionState;
  actions: SessionAction[];
}

const saved = (s: SessionState): SavedSession => ({ sessionId: s.sessionId, resumeUrl: s.resumeUrl, seq: s.seq });
const canResume = (s: SessionState) => s.sessionId !== null && s.seq !== null;
const forgotten = (s: SessionState): SessionState => ({ ...s, sessionId: null, resumeUrl: null, seq: null });

function connect(state: SessionState, gatewayUrl: string): Step {
  const resuming = canResume(state);
  const next: SessionState = {
    ...state,
    phase: "connecting",
    resuming,
    awaitingAck: false,
    heartbeatIntervalMs: null,
    gatewayUrl,
  };
  return { state: next, actions: [{ type: "connect", url: (resuming && state.resumeUrl) || gatewayUrl }] };
}

/** Drops the connection (heartbeats stop) and plans the next one after `inMs`. */
function reconnectLater(state: SessionState, inMs: number, close: { code: number; reason: string } | null): Step {
  const next: SessionState = { ...state, phase: "backoff", awaitingAck: false, heartbeatIntervalMs: null };
  const actions: SessionAction[] = [{ type: "cancel", timer: "heartbeat" }];
  if (close) actions.push({ type: "close", ...close });
  actions.push({ type: "schedule", timer: "reconnect", inMs });
  return { state: next, actions };
}

function heartbeat(state: SessionState): GatewayFrame {
  return { op: GATEWAY_OP.HEARTBEAT, d: state.seq };
}

function onFrame(state: SessionState, frame: GatewayFrame, config: SessionConfig): Step {
  let next: SessionState = state;
  const actions: SessionAction[] = [];
  if (typeof frame.s === "number" && (next.seq === null || frame.s > next.seq)) next = { ...next, seq: frame.s };
  switch (frame.op) {
    case GATEWAY_OP.HELLO: {
      const interval = Number((frame.d as { heartbeat_interval?: unknown } | undefined)?.heartbeat_interval);
      if (!Number.isFinite(interval) || interval <= 0) {
        return reconnectLater(next, backoffMs(next.failures + 1, config.random()), {
          code: RESUMABLE_CLOSE_CODE,
          reason: "HELLO without a heartbeat interval",
        });
      }
      next = { ...next, phase: "handshaking", heartbeatIntervalMs: interval, awaitingAck: false };
      actions.push({ type: "schedule", timer: "heartbeat", inMs: Math.floor(interval * config.random()) });
      actions.push({
        type: "send",
        frame: next.resuming
          ? { op: GATEWAY_OP.RESUME, d: { token: config.token, session_id: next.sessionId, seq: next.seq } }
          : {
              op: GATEWAY_OP.IDENTIFY,
              d: {
                token: config.token,
                intents: config.intents,
                shard: config.shard,
                properties: { os: "workers", browser: "platform", device: "platform" },
              },
            },
      });
      return { state: next, actions };
    }
    case GATEWAY_OP.HEARTBEAT:
      // The provider asks for a heartbeat now; the schedule stays as it is.
      return { state: next, actions: [{ type: "send", frame: heartbeat(next) }] };
    case GATEWAY_OP.HEARTBEAT_ACK:
      next = { ...next, awaitingAck: false };
      return { state: next, actions };
    case GATEWAY_OP.RECONNECT:
      return reconnectLater(next, 0, { code: RESUMABLE_CLOSE_CODE, reason: "RECONNECT asked by the gateway" });
    case GATEWAY_OP.INVALID_SESSION: {
      if (frame.d === true)
        return reconnectLater(next, 0, { code: RESUMABLE_CLOSE_CODE, reason: "INVALID_SESSION (resumable)" });
      const fresh = forgotten(next);
      const step = reconnectLater(
        fresh,
        INVALID_SESSION_MIN_WAIT_MS + Math.floor(INVALID_SESSION_WAIT_SPREAD_MS * config.random()),
        { code: RESUMABLE_CLOSE_CODE, reason: "INVALID_SESSION" },
      );
      return { state: step.state, actions: [{ type: "persist", saved: saved(fresh) }, ...step.actions] };
    }
    case GATEWAY_OP.DISPATCH: {
      const data = frame.d as { session_id?: unknown; resume_gateway_url?: unknown } | undefined;
      if (frame.t === "READY") {
        next = {
          ...next,
          phase: "ready",
          failures: 0,
          sessionId: typeof data?.session_id === "string" ? data.session_id : null,
          resumeUrl: typeof data?.resume_gateway_url === "string" ? data.resume_gateway_url : null,
        };
        return { state: next, actions: [{ type: "persist", saved: saved(next) }] };
      }
      if (frame.t === "RESUMED") {
        next = { ...next, phase: "ready", failures: 0 };
        return { state: next, actions: [{ type: "persist", saved: saved(next) }] };
      }
      if (typeof frame.t === "string" && typeof frame.s === "number") {
        actions.push({ type: "dispatch", event: frame.t, data: frame.d, seq: frame.s, sessionId: next.sessionId });
        actions.push({ type: "persist", saved: saved(next) });
      }
      return { state: next, actions };
    }
    default:
      return { state: next, actions };
  }
}

function onClosed(state: SessionState, code: number, reason: string, config: SessionConfig): Step {
  if (state.phase === "idle" || state.phase === "backoff" || state.phase === "stopped") return { state, actions: [] };
  if (FATAL_CLOSE_CODES.has(code)) {
    const next: SessionState = { ...state, phase: "stopped", stoppedBy: { code, reason }, heartbeatIntervalMs: null };
    return {
      state: next,
      actions: [
        { type: "cancel", timer: "heartbeat" },
        { type: "cancel", timer: "reconnect" },
        { type: "stopped", code, reason },
      ],
    };
  }
  const failed: SessionState = { ...state, failures: state.failures + 1 };
  const next = SESSION_ENDING_CLOSE_CODES.has(code) ? forgotten(failed) : failed;
  const step = reconnectLater(next, backoffMs(next.failures, config.random()), null);
  return next.sessionId === state.sessionId
    ? step
    : { state: step.state, actions: [{ type: "persist", saved: saved(next) }, ...step.actions] };
}

function onTimer(state: SessionState, timer: TimerName, config: SessionConfig): Step {
  if (timer === "reconnect") {
    if (state.phase !== "backoff" || !state.gatewayUrl) return { state, actions: [] };
    return connect(state, state.gatewayUrl);
  }
  if (state.heartbeatIntervalMs === null || (state.phase !== "handshaking" && state.phase !== "ready")) {
    return { state, actions: [] };
  }
  if (state.awaitingAck) {
    // No ACK for a whole interval: a zombie connection. Close it (resumably) and RESUME on a new one.
    const failed: SessionState = { ...state, failures: state.failures + 1 };
    return reconnectLater(failed, backoffMs(failed.failures, config.random()), {
      code: RESUMABLE_CLOSE_CODE,
      reason: "heartbeat ACK missed",
    });
  }
  const next: SessionState = { ...state, awaitingAck: true };
  return {
    state: next,
    actions: [
      { type: "send", frame: heartbeat(state) },
      { type: "schedule", timer: "heartbeat", inMs: state.heartbeatIntervalMs },
    ],
  };
}

export function step(state: SessionState, input: SessionInput, config: SessionConfig): Step {
  switch (input.type) {
    case "start":
      if (state.phase === "idle" || state.phase === "stopped") {
        return connect({ ...state, stoppedBy: null }, input.gatewayUrl);
      }
      return { state, actions: [] };
    case "frame":
      if (state.phase !== "connecting" && state.phase !== "handshaking" && state.phase !== "ready")
        return { state, actions: [] };
      return onFrame(state, input.frame, config);
    case "closed":
      return onClosed(state, input.code, input.reason ?? "", config);
    case "timer":
      return onTimer(state, input.timer, config);
  }
}
