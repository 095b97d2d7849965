/**
 * Runs gatewaySession.ts against a real socket: opens connections, feeds
 * frames, closes, timers and the answers it asked for (`GET /gateway/bot`,
 * an IDENTIFY slot) into `step`, and performs the actions it returns.
 * Everything with a side effect is injected (how to open a socket, ask the
 * gateway, take a slot, timers, storage, what to do with a dispatch or a
 * health report), so the relay actor is a few lines and tests run it
 * in-process against the fake chat server with a clock they move.
 *
 * Dispatches are handled one at a time, in sequence order, and the sequence
 * is saved only after its dispatch was handled: a relay evicted mid-way
 * RESUMEs from an earlier sequence and the replayed events are de-duplicated
 * downstream (chatEvents.ts).
 */
import { parseFrame, type SessionStartLimit } from "./gatewayProtocol.ts";
import {
  initialSession,
  step,
  type SavedSession,
  type SessionAction,
  type SessionConfig,
  type SessionInput,
  type SessionState,
  type TimerName,
} from "./gatewaySession.ts";
import type { RelayProblem } from "./relayProblem.ts";

export interface GatewayDispatch {
  event: string;
  data: unknown;
  seq: number;
  sessionId: string | null;
}

export interface RelayTimers {
  set(run: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

export const systemTimers: RelayTimers = {
  set: (run, ms) => setTimeout(run, ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** `GET /gateway/bot`'s answer, or why there is none (`tokenRefused`: 401, or no token configured). */
export type GatewayBotAnswer =
  | { ok: true; url: string; limit: SessionStartLimit | null }
  | { ok: false; tokenRefused: boolean; reason: string };

export interface GatewayConnectionDeps {
  session: SessionConfig;
  /** `GET /gateway/bot` (never throws). */
  gatewayBot(): Promise<GatewayBotAnswer>;
  /** Takes one IDENTIFY of rate-limit key `key` (shared by every shard): 0 when taken, else the ms to wait. */
  identifySlot(key: number): Promise<number>;
  /** An accepted WebSocket to `url` (throws when the upgrade is refused). */
  openSocket(url: string): Promise<WebSocket>;
  timers: RelayTimers;
  store: { load(): Promise<SavedSession | null>; save(saved: SavedSession): Promise<void> };
  onDispatch(dispatch: GatewayDispatch): Promise<void>;
  onStopped?(code: number, reason: string): void;
  /** The relay's health changed: a problem (cause, fix) or null (READY). Handled in order with the dispatches. */
  onHealth?(problem: RelayProblem | null): Promise<void>;
  log?(message: string): void;
}

export interface GatewayStatus {
  phase: SessionState["phase"];
  connected: boolean;
  seq: number | null;
  hasSession: boolean;
  failures: number;
  stoppedBy: SessionState["stoppedBy"];
  problem: RelayProblem | null;
}

export class GatewayConnection {
  private state: SessionState | null = null;
  private socket: WebSocket | null = null;
  /** Bumped by every connection opened and by shutdown: a late answer for an older one is dropped. */
  private attempt = 0;
  private readonly timers = new Map<TimerName, unknown>();
  /** Dispatches, the saves that follow them and health reports, in order. */
  private queue: Promise<void> = Promise.resolve();
  /** Questions asked for the session (`GET /gateway/bot`, IDENTIFY slots) not answered yet. */
  private readonly asking = new Set<Promise<void>>();

  private readonly deps: GatewayConnectionDeps;

  constructor(deps: GatewayConnectionDeps) {
    this.deps = deps;
  }

  /** Connects unless already connecting, connected or waiting (to reconnect, or to retry after a stop). */
  async start(): Promise<GatewayStatus> {
    if (!this.state) this.state = initialSession(await this.deps.store.load());
    this.apply({ type: "start" });
    return this.status();
  }

  status(): GatewayStatus {
    const s = this.state ?? initialSession();
    return {
      phase: s.phase,
      connected: this.socket !== null,
      seq: s.seq,
      hasSession: s.sessionId !== null,
      failures: s.failures,
      stoppedBy: s.stoppedBy,
      problem: s.problem,
    };
  }

  /** Resolves when every dispatch received so far was handled and every question answered (tests). */
  async settled(): Promise<void> {
    for (;;) {
      const queue = this.queue;
      await Promise.all([queue, ...this.asking]);
      if (queue === this.queue && this.asking.size === 0) return;
    }
  }

  /** Closes the socket and clears the timers (tests, and a relay being replaced). */
  shutdown(): void {
    for (const handle of this.timers.values()) this.deps.timers.clear(handle);
    this.timers.clear();
    this.attempt++;
    this.detach(1000, "relay shut down");
  }

  private apply(input: SessionInput): void {
    if (!this.state) return;
    const next = step(this.state, input, this.deps.session);
    this.state = next.state;
    for (const action of next.actions) this.perform(action);
  }

  private perform(action: SessionAction): void {
    switch (action.type) {
      case "fetchGateway":
        this.ask(
          async () => {
            const answer = await this.deps.gatewayBot();
            return answer.ok
              ? { type: "gateway", url: answer.url, limit: answer.limit }
              : { type: "gatewayFailed", tokenRefused: answer.tokenRefused, reason: answer.reason };
          },
          (error) => ({ type: "gatewayFailed", tokenRefused: false, reason: String(error) }),
        );
        return;
      case "takeIdentifySlot": {
        const key = action.key;
        // Without an answer from the shared limiter, IDENTIFY anyway: the provider's INVALID_SESSION backs it off.
        this.ask(
          async () => ({ type: "identifySlot", waitMS: await this.deps.identifySlot(key) }),
          () => ({ type: "identifySlot", waitMS: 0 }),
        );
        return;
      }
      case "connect":
        void this.open(action.url);
        return;
      case "send":
        try {
          this.socket?.send(JSON.stringify(action.frame));
        } catch (error) {
          this.deps.log?.(`gateway relay: send failed: ${String(error)}`);
        }
        return;
      case "close":
        this.detach(action.code, action.reason);
        return;
      case "schedule": {
        this.cancel(action.timer);
        const handle = this.deps.timers.set(() => {
          this.timers.delete(action.timer);
          this.apply({ type: "timer", timer: action.timer });
        }, action.inMS);
        this.timers.set(action.timer, handle);
        return;
      }
      case "cancel":
        this.cancel(action.timer);
        return;
      case "dispatch": {
        const { event, data, seq, sessionId } = action;
        this.enqueue(() => this.deps.onDispatch({ event, data, seq, sessionId }));
        return;
      }
      case "persist": {
        const saved = action.saved;
        this.enqueue(() => this.deps.store.save(saved));
        return;
      }
      case "stopped":
        this.deps.log?.(`gateway relay stopped: close ${action.code} ${action.reason}`);
        this.deps.onStopped?.(action.code, action.reason);
        return;
      case "health": {
        const { problem } = action;
        if (problem) this.deps.log?.(`gateway relay: ${problem.cause} Fix: ${problem.fix}`);
        const report = this.deps.onHealth;
        if (report) this.enqueue(() => report(problem));
        return;
      }
    }
  }

  /** Runs a question for the session; its answer (or `failed`'s) is fed back unless the connection moved on. */
  private ask(question: () => Promise<SessionInput>, failed: (error: unknown) => SessionInput): void {
    const attempt = this.attempt;
    const asked = question()
      .catch((error: unknown) => {
        this.deps.log?.(`gateway relay: ${String(error)}`);
        return failed(error);
      })
      .then((answer) => {
        if (attempt === this.attempt) this.apply(answer);
      })
      .finally(() => this.asking.delete(asked));
    this.asking.add(asked);
  }

  private enqueue(work: () => Promise<void>): void {
    this.queue = this.queue.then(work).catch((error: unknown) => {
      this.deps.log?.(`gateway relay: ${String(error)}`);
    });
  }

  private cancel(timer: TimerName): void {
    const handle = this.timers.get(timer);
    if (handle !== undefined) this.deps.timers.clear(handle);
    this.timers.delete(timer);
  }

  /** Stops listening to the current socket (no `closed` input for it) and closes it. */
  private detach(code: number, reason: string): void {
    const socket = this.socket;
    this.socket = null;
    if (!socket) return;
    try {
      socket.close(code, reason);
    } catch {
      // already closed
    }
  }

  private async open(url: string): Promise<void> {
    const attempt = ++this.attempt;
    let socket: WebSocket;
    try {
      socket = await this.deps.openSocket(url);
    } catch (error) {
      if (attempt === this.attempt) this.apply({ type: "closed", code: 1006, reason: String(error) });
      return;
    }
    if (attempt !== this.attempt) {
      socket.close(1000, "superseded");
      return;
    }
    this.socket = socket;
    const closed = (code: number, reason: string) => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.apply({ type: "closed", code, reason });
    };
    socket.addEventListener("message", (event) => {
      if (this.socket !== socket) return;
      const frame = parseFrame(event.data);
      if (frame) this.apply({ type: "frame", frame });
    });
    socket.addEventListener("close", (event) => closed(event.code, event.reason));
    socket.addEventListener("error", () => closed(1006, "socket error"));
  }
}
