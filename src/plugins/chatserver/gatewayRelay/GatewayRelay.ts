/**
 * `GatewayRelay`: the actor that holds the bot's outbound WebSocket to the
 * chat server's Gateway (Workers cannot keep a socket between requests; an
 * actor can). One per shard, named `shard-<i>-of-<n>`; one shard (0 of 1)
 * unless `CHATSERVER_GATEWAY_SHARDS` says more, and then the provider sends
 * each server's events to shard `(guild_id >> 22) % n` (gatewayProtocol.ts
 * `shardFor`). The protocol is gatewaySession.ts, run by gatewayConnection.ts;
 * dispatches go to relayDispatch.ts.
 *
 * Started by `startGatewayRelays` (install completion, every `POST /deploy`,
 * `POST /gateway/start`); a start is a no-op while it is connected or waiting
 * to reconnect. Its session (id, sequence, resume URL) is kept in storage and
 * a watchdog alarm every minute restarts it after an eviction, RESUMEing the
 * session. A fatal close (bad token, disallowed intents) stops it; a start
 * revives it at most every 10 minutes.
 */
import { DurableObject } from "cloudflare:workers";
import { callChatServer, providerFetch } from "../chatServerApi.ts";
import type { ChatServerEnv } from "../env.ts";
import {
  GatewayConnection,
  systemTimers,
  type GatewayConnectionDeps,
  type GatewayStatus,
} from "./gatewayConnection.ts";
import { gatewayConnectUrl, RELAY_INTENTS } from "./gatewayProtocol.ts";
import type { SavedSession } from "./gatewaySession.ts";
import { handleGatewayDispatch } from "./relayDispatch.ts";

export const WATCHDOG_INTERVAL_MS = 60_000;
export const RESTART_AFTER_STOP_MS = 10 * 60_000;

type Shard = [number, number];

/** Opens an accepted WebSocket to a Gateway URL through the plugin's route to the chat server. */
export async function openGatewaySocket(env: ChatServerEnv, url: string): Promise<WebSocket> {
  // fetch() upgrades http(s) URLs; the Gateway names ws(s) ones.
  const target = gatewayConnectUrl(url).replace(/^ws(s?):/, "http$1:");
  const response = await providerFetch(env, new Request(target, { headers: { Upgrade: "websocket" } }));
  const socket = response.webSocket;
  if (response.status !== 101 || !socket) {
    await response.body?.cancel();
    throw new Error(`the Gateway refused the connection (HTTP ${response.status})`);
  }
  socket.accept();
  return socket;
}

/** `GET /gateway/bot` (bot token): where the Gateway is. */
export async function gatewayBotUrl(env: ChatServerEnv): Promise<string> {
  const answer = await callChatServer<{ url?: unknown }>(env, "GET", "/gateway/bot", undefined, "bot");
  if (typeof answer?.url !== "string") throw new Error("GET /gateway/bot named no url");
  return answer.url;
}

/** The connection of one shard, wired to this env (the actor's, or a test's). */
export function relayConnection(
  env: ChatServerEnv,
  shard: Shard,
  store: GatewayConnectionStore,
  overrides: Partial<Pick<GatewayConnectionDeps, "timers" | "session" | "onStopped">> & { now?: () => number } = {},
): GatewayConnection {
  const now = overrides.now ?? Date.now;
  return new GatewayConnection({
    session: overrides.session ?? {
      token: env.CHATSERVER_BOT_TOKEN ?? "",
      intents: RELAY_INTENTS,
      shard,
      random: Math.random,
    },
    gatewayUrl: () => gatewayBotUrl(env),
    openSocket: (url) => openGatewaySocket(env, url),
    timers: overrides.timers ?? systemTimers,
    store,
    onDispatch: async (dispatch) => {
      await handleGatewayDispatch(env, dispatch, now());
    },
    ...(overrides.onStopped ? { onStopped: overrides.onStopped } : {}),
    log: (message) => console.error(message),
  });
}

export interface GatewayConnectionStore {
  load(): Promise<SavedSession | null>;
  save(saved: SavedSession): Promise<void>;
}

export class GatewayRelay extends DurableObject<ChatServerEnv> {
  private connection: GatewayConnection | null = null;
  private stoppedAt = 0;

  /** Starts the relay for `shard` unless it runs; answers its status. */
  async start(shard: Shard = [0, 1]): Promise<GatewayStatus> {
    await this.ctx.storage.put("shard", shard);
    const connection = this.connectionFor(shard);
    const status = connection.status();
    if (status.phase === "stopped" && Date.now() - this.stoppedAt < RESTART_AFTER_STOP_MS) return status;
    await this.ctx.storage.setAlarm(Date.now() + WATCHDOG_INTERVAL_MS);
    return connection.start();
  }

  async status(): Promise<GatewayStatus> {
    return this.connection?.status() ?? this.idleStatus();
  }

  /** The watchdog: after an eviction this is what brings the relay back (RESUMEing its saved session). */
  override async alarm(): Promise<void> {
    const shard = await this.ctx.storage.get<Shard>("shard");
    if (!shard) return;
    const status = await this.start(shard);
    if (status.phase === "stopped") await this.ctx.storage.deleteAlarm();
  }

  private connectionFor(shard: Shard): GatewayConnection {
    if (this.connection) return this.connection;
    const storage = this.ctx.storage;
    this.connection = relayConnection(
      this.env,
      shard,
      {
        load: async () => (await storage.get<SavedSession>("session")) ?? null,
        save: (saved) => storage.put("session", saved),
      },
      { onStopped: () => (this.stoppedAt = Date.now()) },
    );
    return this.connection;
  }

  private async idleStatus(): Promise<GatewayStatus> {
    const saved = await this.ctx.storage.get<SavedSession>("session");
    return {
      phase: "idle",
      connected: false,
      seq: saved?.seq ?? null,
      hasSession: Boolean(saved?.sessionId),
      failures: 0,
      stoppedBy: null,
    };
  }
}

/** The worker's bindings with its `GatewayRelay` actors (this worker's class); absent in some tests. */
export interface GatewayRelayEnv extends ChatServerEnv {
  GATEWAY_RELAY?: DurableObjectNamespace<GatewayRelay>;
}

/** Pokes every shard's relay to start (a no-op for a running one). Without the binding (tests), nothing. */
export async function startGatewayRelays(env: GatewayRelayEnv): Promise<GatewayStatus[]> {
  const namespace = env.GATEWAY_RELAY;
  if (!namespace) return [];
  const count = Math.max(1, Math.min(64, Math.floor(Number(env.CHATSERVER_GATEWAY_SHARDS ?? "1")) || 1));
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      namespace.get(namespace.idFromName(`shard-${i}-of-${count}`)).start([i, count]),
    ),
  );
}
