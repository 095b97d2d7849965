/**
 * The Gateway protocol as a pure state machine: `step(state, input, config)`
 * takes what happened (a frame, a close, a timer, an answer it asked for) and
 * returns the next state and what to do (fetch, connect, send, close,
 * schedule, dispatch, persist, report health). No sockets, no clocks: the
 * relay actor (GatewayRelay.ts, through gatewayConnection.ts) performs the
 * actions; tests drive it table-driven.
 *
 *   start → with a session: connect to its resume URL → HELLO (op 10) →
 *   RESUME (op 6). Without one, a fresh IDENTIFY: first its rate-limit slot
 *   (`max_concurrency` per 5 s, key `shard % max_concurrency`, one limiter
 *   every shard shares), then `GET /gateway/bot`, whose `session_start_limit`
 *   says whether a session start may be spent: with fewer than
 *   `max_concurrency` left (0 for most bots; shards starting together must
 *   not overspend) wait `reset_after` (one start too many makes the provider
 *   reset the bot token) and say so in the health; else connect → HELLO →
 *   IDENTIFY (op 2) → READY (session id, resume URL; the health clears) /
 *   RESUMED; heartbeats (op 1, the last sequence) every `heartbeat_interval`,
 *   the first after `interval × jitter`; a heartbeat without an ACK (op 11)
 *   by the next one means a zombie connection: close it and RESUME on a new
 *   one. The gateway asking for a heartbeat (op 1) gets one at once, which
 *   expects its ACK like any other. RECONNECT (op 7): close and RESUME at
 *   once. INVALID_SESSION (op 9): RESUME when `d` is true, else forget the
 *   session and IDENTIFY after 1–5 s; in a row, they wait like drops. A
 *   dropped connection is RESUMEd after a backoff that doubles with each
 *   failure in a row (full jitter, capped); READY / RESUMED resets it. A
 *   fatal close (bad token, intents, shard) stops the relay, reports the
 *   cause and the fix as its health, and tries again after STOPPED_RETRY_MS.
 */
import {
  FATAL_CLOSE_CODES,
  GATEWAY_OP,
  type GatewayFrame,
  identifyKey,
  RESUMABLE_CLOSE_CODE,
  SESSION_ENDING_CLOSE_CODES,
  type SessionStartLimit,
} from "./gatewayProtocol.ts";
import { problemForClose, type RelayProblem, sessionStartsUsedUp, tokenRefused } from "./relayProblem.ts";

/** What survives an eviction (kept in the actor's storage). */
export interface SavedSession {
  sessionId: string | null;
  resumeUrl: string | null;
  seq: number | null;
}

export type SessionPhase =
  /** Not started (a new actor, or one restarted after eviction). */
  | "idle"
  /** Before a fresh IDENTIFY: waiting for its rate-limit slot. */
  | "pacing"
  /** Before a fresh IDENTIFY: asking `GET /gateway/bot` where to connect and whether a session start is left. */
  | "preflight"
  /** Waiting to reconnect, or for the session starts to reset (a `start` does not cut the wait short). */
  | "backoff"
  /** A connection is being opened, or is open and waiting for HELLO. */
  | "connecting"
  /** IDENTIFY or RESUME sent, waiting for READY / RESUMED. */
  | "handshaking"
  | "ready"
  /** A fatal close: the relay tries again after STOPPED_RETRY_MS; a `start` does not cut the wait short. */
  | "stopped";

export interface SessionState extends SavedSession {
  phase: SessionPhase;
  /** Whether the current connection RESUMEs (else IDENTIFYs). */
  resuming: boolean;
  heartbeatIntervalMS: number | null;
  awaitingAck: boolean;
  /** Failed connections in a row (drives the backoff). */
  failures: number;
  /** The last fatal close (or refused `GET /gateway/bot`: the HTTP status), for status. */
  stoppedBy: { code: number; reason: string } | null;
  /** What keeps the relay from its session, as reported in the health; null once READY. */
  problem: RelayProblem | null;
  /** Where a fresh IDENTIFY connects (`GET /gateway/bot`'s `url`). */
  gatewayUrl: string | null;
  /** `session_start_limit.max_concurrency` from the last `GET /gateway/bot`. */
  maxConcurrency: number;
}

export type TimerName = "heartbeat" | "reconnect" | "identify";

export type SessionInput =
  /** Begin (a poke, an alarm after eviction). */
  | { type: "start" }
  /** `GET /gateway/bot` answered. */
  | { type: "gateway"; url: string; limit: SessionStartLimit | null }
  /** `GET /gateway/bot` failed; `tokenRefused` when the bot token was refused (401) or is missing. */
  | { type: "gatewayFailed"; tokenRefused: boolean; reason: string }
  /** The IDENTIFY rate-limit slot: 0 = taken, go; else try again in `waitMS`. */
  | { type: "identifySlot"; waitMS: number }
  | { type: "frame"; frame: GatewayFrame }
  /** The connection closed (or could not be opened: code 1006). */
  | { type: "closed"; code: number; reason?: string }
  | { type: "timer"; timer: TimerName };

export type SessionAction =
  /** Ask `GET /gateway/bot`; answer with `gateway` or `gatewayFailed`. */
  | { type: "fetchGateway" }
  /** Take an IDENTIFY slot of rate-limit key `key` (one per 5 s); answer with `identifySlot`. */
  | { type: "takeIdentifySlot"; key: number }
  | { type: "connect"; url: string }
  | { type: "send"; frame: GatewayFrame }
  /** Close the current connection; the adapter reports no `closed` for a close it asked for. */
  | { type: "close"; code: number; reason: string }
  | { type: "schedule"; timer: TimerName; inMS: number }
  | { type: "cancel"; timer: TimerName }
  | { type: "dispatch"; event: string; data: unknown; seq: number; sessionId: string | null }
  | { type: "persist"; saved: SavedSession }
  | { type: "stopped"; code: number; reason: string }
  /** Report the relay's health: a problem (cause and fix), or null when READY. */
  | { type: "health"; problem: RelayProblem | null };

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
/** After a fatal close: long enough not to hammer the provider, short enough to notice a fix the same hour. */
export const STOPPED_RETRY_MS = 10 * 60_000;

/** The wait before reconnect attempt number `failures` (1 = the first): full jitter over base × 2^(failures-1), capped. */
export function backoffMS(failures: number, random: number): number {
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
    heartbeatIntervalMS: null,
    awaitingAck: false,
    failures: 0,
    stoppedBy: null,
    problem: null,
    gatewayUrl: null,
    maxConcurrency: 1,
  };
}

export interface Step {
  state: SessionState;
  actions: SessionAction[];
}

const saved = (s: SessionState): SavedSession => ({ sessionId: s.sessionId, resumeUrl: s.resumeUrl, seq: s.seq });
const canResume = (s: SessionState) => s.sessionId !== null && s.seq !== null;
const forgotten = (s: SessionState): SessionState => ({ ...s, sessionId: null, resumeUrl: null, seq: null });
const offline = (s: SessionState): SessionState => ({ ...s, awaitingAck: false, heartbeatIntervalMS: null });

/** Connects: straight to the resume URL when there is a session to RESUME, else after the slot and `GET /gateway/bot`. */
function begin(state: SessionState, config: SessionConfig): Step {
  const resumeAt = canResume(state) ? (state.resumeUrl ?? state.gatewayUrl) : null;
  if (resumeAt) return connect(state, resumeAt, true);
  return { state: { ...offline(state), phase: "pacing" }, actions: [takeSlot(state, config)] };
}

function takeSlot(state: SessionState, config: SessionConfig): SessionAction {
  return { type: "takeIdentifySlot", key: identifyKey(config.shard[0], state.maxConcurrency) };
}

function connect(state: SessionState, url: string, resuming: boolean): Step {
  return { state: { ...offline(state), phase: "connecting", resuming }, actions: [{ type: "connect", url }] };
}

/** Drops the connection (heartbeats stop) and plans the next one after `inMS`. */
function reconnectLater(state: SessionState, inMS: number, close: { code: number; reason: string } | null): Step {
  const next: SessionState = { ...offline(state), phase: "backoff" };
  const actions: SessionAction[] = [
    { type: "cancel", timer: "heartbeat" },
    { type: "cancel", timer: "identify" },
  ];
  if (close) actions.push({ type: "close", ...close });
  actions.push({ type: "schedule", timer: "reconnect", inMS });
  return { state: next, actions };
}

/** Gives up for STOPPED_RETRY_MS, saying why. */
function stop(state: SessionState, stoppedBy: { code: number; reason: string }, problem: RelayProblem): Step {
  const next: SessionState = { ...offline(state), phase: "stopped", stoppedBy, problem };
  return {
    state: next,
    actions: [
      { type: "cancel", timer: "heartbeat" },
      { type: "cancel", timer: "identify" },
      { type: "stopped", ...stoppedBy },
      { type: "health", problem },
      { type: "schedule", timer: "reconnect", inMS: STOPPED_RETRY_MS },
    ],
  };
}

function heartbeat(state: SessionState): GatewayFrame {
  return { op: GATEWAY_OP.HEARTBEAT, d: state.seq };
}

function identify(config: SessionConfig): GatewayFrame {
  return {
    op: GATEWAY_OP.IDENTIFY,
    d: {
      token: config.token,
      intents: config.intents,
      shard: config.shard,
      properties: { os: "workers", browser: "platform", device: "platform" },
    },
  };
}

function onGateway(state: SessionState, url: string, limit: SessionStartLimit | null): Step {
  if (state.phase !== "preflight") return { state, actions: [] };
  const next: SessionState = { ...state, gatewayUrl: url, maxConcurrency: limit?.maxConcurrency ?? 1 };
  // A session saved without its resume URL (rare) RESUMEs at the gateway URL: a RESUME spends no session start.
  if (canResume(next)) return connect(next, url, true);
  if (limit && limit.remaining < limit.maxConcurrency) {
    // One start too many ends every session of the bot and resets its token. Shards may IDENTIFY
    // max_concurrency at a time, each after its own look at `remaining`: keep that many in reserve.
    const problem = sessionStartsUsedUp(limit);
    const waiting: SessionState = { ...next, phase: "backoff", problem };
    return {
      state: waiting,
      actions: [
        { type: "health", problem },
        { type: "schedule", timer: "reconnect", inMS: Math.max(limit.resetAfterMS, BACKOFF_BASE_MS) },
      ],
    };
  }
  return connect(next, url, false);
}

function onGatewayFailed(state: SessionState, refused: boolean, reason: string, config: SessionConfig): Step {
  if (state.phase !== "preflight") return { state, actions: [] };
  if (refused) return stop(state, { code: 401, reason }, tokenRefused(reason));
  const failed: SessionState = { ...state, failures: state.failures + 1 };
  return reconnectLater(failed, backoffMS(failed.failures, config.random()), null);
}

function onIdentifySlot(state: SessionState, waitMS: number): Step {
  if (state.phase !== "pacing") return { state, actions: [] };
  if (waitMS > 0) return { state, actions: [{ type: "schedule", timer: "identify", inMS: waitMS }] };
  return { state: { ...state, phase: "preflight" }, actions: [{ type: "fetchGateway" }] };
}

function onFrame(state: SessionState, frame: GatewayFrame, config: SessionConfig): Step {
  let next: SessionState = state;
  const actions: SessionAction[] = [];
  if (typeof frame.s === "number" && (next.seq === null || frame.s > next.seq)) next = { ...next, seq: frame.s };
  switch (frame.op) {
    case GATEWAY_OP.HELLO: {
      const interval = Number((frame.d as { heartbeat_interval?: unknown } | undefined)?.heartbeat_interval);
      if (!Number.isFinite(interval) || interval <= 0) {
        return reconnectLater(next, backoffMS(next.failures + 1, config.random()), {
          code: RESUMABLE_CLOSE_CODE,
          reason: "HELLO without a heartbeat interval",
        });
      }
      next = { ...next, phase: "handshaking", heartbeatIntervalMS: interval, awaitingAck: false };
      actions.push({ type: "schedule", timer: "heartbeat", inMS: Math.floor(interval * config.random()) });
      actions.push({
        type: "send",
        frame: next.resuming
          ? { op: GATEWAY_OP.RESUME, d: { token: config.token, session_id: next.sessionId, seq: next.seq } }
          : identify(config),
      });
      return { state: next, actions };
    }
    case GATEWAY_OP.HEARTBEAT: {
      // The provider asks for a heartbeat now. It expects an ACK like any other: unless one is already awaited
      // (whose deadline stands), the next scheduled heartbeat, one interval from now, checks that it came.
      actions.push({ type: "send", frame: heartbeat(next) });
      const interval = next.heartbeatIntervalMS;
      if (!next.awaitingAck && interval !== null) {
        next = { ...next, awaitingAck: true };
        actions.push({ type: "schedule", timer: "heartbeat", inMS: interval });
      }
      return { state: next, actions };
    }
    case GATEWAY_OP.HEARTBEAT_ACK:
      next = { ...next, awaitingAck: false };
      return { state: next, actions };
    case GATEWAY_OP.RECONNECT:
      return reconnectLater(next, 0, { code: RESUMABLE_CLOSE_CODE, reason: "RECONNECT asked by the gateway" });
    case GATEWAY_OP.INVALID_SESSION: {
      // In a row (no READY between) they count as failures, so a gateway that keeps refusing is asked less often.
      const failed: SessionState = { ...next, failures: next.failures + 1 };
      const random = config.random();
      const backoff = backoffMS(failed.failures, random);
      if (frame.d === true)
        return reconnectLater(failed, backoff, { code: RESUMABLE_CLOSE_CODE, reason: "INVALID_SESSION (resumable)" });
      const fresh = forgotten(failed);
      const wait = Math.max(backoff, INVALID_SESSION_MIN_WAIT_MS + Math.floor(INVALID_SESSION_WAIT_SPREAD_MS * random));
      const step = reconnectLater(fresh, wait, { code: RESUMABLE_CLOSE_CODE, reason: "INVALID_SESSION" });
      return { state: step.state, actions: [{ type: "persist", saved: saved(fresh) }, ...step.actions] };
    }
    case GATEWAY_OP.DISPATCH: {
      const data = frame.d as { session_id?: unknown; resume_gateway_url?: unknown } | undefined;
      if (frame.t === "READY") {
        next = {
          ...next,
          phase: "ready",
          failures: 0,
          stoppedBy: null,
          problem: null,
          sessionId: typeof data?.session_id === "string" ? data.session_id : null,
          resumeUrl: typeof data?.resume_gateway_url === "string" ? data.resume_gateway_url : null,
        };
        return {
          state: next,
          actions: [
            { type: "persist", saved: saved(next) },
            { type: "health", problem: null },
          ],
        };
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
  if (state.phase !== "connecting" && state.phase !== "handshaking" && state.phase !== "ready")
    return { state, actions: [] };
  if (FATAL_CLOSE_CODES.has(code)) {
    // The session is gone with the connection: the retry IDENTIFYs (after asking GET /gateway/bot).
    const step = stop(forgotten(state), { code, reason }, problemForClose(code, reason));
    return state.sessionId === null
      ? step
      : { state: step.state, actions: [{ type: "persist", saved: saved(step.state) }, ...step.actions] };
  }
  const failed: SessionState = { ...state, failures: state.failures + 1 };
  const next = SESSION_ENDING_CLOSE_CODES.has(code) ? forgotten(failed) : failed;
  const step = reconnectLater(next, backoffMS(next.failures, config.random()), null);
  return next.sessionId === state.sessionId
    ? step
    : { state: step.state, actions: [{ type: "persist", saved: saved(next) }, ...step.actions] };
}

function onTimer(state: SessionState, timer: TimerName, config: SessionConfig): Step {
  if (timer === "reconnect") {
    if (state.phase !== "backoff" && state.phase !== "stopped") return { state, actions: [] };
    return begin(state, config);
  }
  if (timer === "identify") {
    if (state.phase !== "pacing") return { state, actions: [] };
    return { state, actions: [takeSlot(state, config)] };
  }
  if (state.heartbeatIntervalMS === null || (state.phase !== "handshaking" && state.phase !== "ready")) {
    return { state, actions: [] };
  }
  if (state.awaitingAck) {
    // No ACK for a whole interval: a zombie connection. Close it (resumably) and RESUME on a new one.
    const failed: SessionState = { ...state, failures: state.failures + 1 };
    return reconnectLater(failed, backoffMS(failed.failures, config.random()), {
      code: RESUMABLE_CLOSE_CODE,
      reason: "heartbeat ACK missed",
    });
  }
  const next: SessionState = { ...state, awaitingAck: true };
  return {
    state: next,
    actions: [
      { type: "send", frame: heartbeat(state) },
      { type: "schedule", timer: "heartbeat", inMS: state.heartbeatIntervalMS },
    ],
  };
}

export function step(state: SessionState, input: SessionInput, config: SessionConfig): Step {
  switch (input.type) {
    case "start":
      // A stopped relay waits for its retry: pokes (deploys, installs) cannot make it hammer the provider.
      return state.phase === "idle" ? begin(state, config) : { state, actions: [] };
    case "gateway":
      return onGateway(state, input.url, input.limit);
    case "gatewayFailed":
      return onGatewayFailed(state, input.tokenRefused, input.reason, config);
    case "identifySlot":
      return onIdentifySlot(state, input.waitMS);
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
