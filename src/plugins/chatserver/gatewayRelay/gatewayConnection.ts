/**
 * Runs gatewaySession.ts against a real socket: opens connections, feeds
 * frames, closes and timers into `step`, and performs the actions it returns.
 * Everything with a side effect is injected (how to open a socket, timers,
 * storage, what to do with a dispatch), so the relay actor is a few lines and
 * tests run it in-process against the fake chat server with a clock they move.
 *
 * Dispatches are handled one at a time, in sequence order, and the sequence
 * is saved only after its dispatch was handled: a relay evicted mid-way
 * RESUMEs from an earlier sequence and the replayed events are de-duplicated
 * downstream (chatEvents.ts).
 */
import { parseFrame } from "./gatewayProtocol.ts";
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

export interface GatewayConnectionDeps {
  session: SessionConfig;
  /** `GET /gateway/bot`'s `url`. */
  gatewayUrl(): Promise<string>;
  /** An accepted WebSocket to `url` (throws when the upgrade is refused). */
  openSocket(url: string): Promise<WebSocket>;
  timers: RelayTimers;
  store: { load(): Promise<SavedSession | null>; save(saved: SavedSession): Promise<void> };
  onDispatch(dispatch: GatewayDispatch): Promise<void>;
  onStopped?(code: number, reason: string): void;
  log?(message: string): void;
}

export interface GatewayStatus {
  phase: SessionState["phase"];
  connected: boolean;
  seq: number | null;
  hasSession: boolean;
  failures: number;
  stoppedBy: SessionState["stoppedBy"];
}

export class GatewayConnection {
  private state: SessionState | null = null;
  private socket: WebSocket | null = null;
  private attempt = 0;
  private readonly timers = new Map<TimerName, unknown>();
  /** Dispatches and the saves that follow them, in order. */
  private queue: Promise<void> = Promise.resolve();

  private readonly deps: GatewayConnectionDeps;

  constructor(deps: GatewayConnectionDeps) {
    this.deps = deps;
  }

  /** Connects unless already connected, connecting or waiting to reconnect. */
  async start(): Promise<GatewayStatus> {
    if (!this.state) this.state = initialSession(await this.deps.store.load());
    if (this.state.phase === "idle" || this.state.phase === "stopped") {
      this.apply({ type: "start", gatewayUrl: await this.deps.gatewayUrl() });
    }
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
    };
  }

  /** Resolves when every dispatch received so far was handled (tests). */
  settled(): Promise<void> {
    return this.queue;
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
        }, action.inMs);
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
    }
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
