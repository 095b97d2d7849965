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
 * session. A fatal close (bad token, disallowed intents) stops it and records
 * the cause and the fix as the chat-server connection health of every
 * project (pluginProblems.ts: the bot is shared); it tries again every 10
 * minutes (the time of the stop is kept, so an eviction does not shorten the
 * wait), and READY clears the health. Before every IDENTIFY it takes the
 * slot of its rate-limit key from one RateLimiter actor all shards share,
 * then asks `GET /gateway/bot` whether a session start is left.
 */
import { DurableObject } from "cloudflare:workers";
import { PlatformError } from "../../../core/errors.ts";
import { clearPluginProblem, recordPluginProblem } from "../../../workers/db/pluginProblems.ts";
import { callChatServer, providerFetch } from "../chatServerApi.ts";
import { PLUGIN_ID, type ChatServerEnv } from "../env.ts";
import {
  GatewayConnection,
  systemTimers,
  type GatewayBotAnswer,
  type GatewayConnectionDeps,
  type GatewayStatus,
} from "./gatewayConnection.ts";
import { gatewayConnectUrl, IDENTIFY_WINDOW_MS, parseSessionStartLimit, RELAY_INTENTS } from "./gatewayProtocol.ts";
import { type SavedSession, STOPPED_RETRY_MS } from "./gatewaySession.ts";
import { handleGatewayDispatch } from "./relayDispatch.ts";

export const WATCHDOG_INTERVAL_MS = 60_000;
/** The RateLimiter actor every shard takes its IDENTIFY slots from. */
const IDENTIFY_LIMITER = "chatserver-identify";

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

/** `GET /gateway/bot` (bot token): where the Gateway is and the session start limit. */
export async function gatewayBot(env: ChatServerEnv): Promise<GatewayBotAnswer> {
  try {
    const answer = await callChatServer<{ url?: unknown; session_start_limit?: unknown }>(env, {
      method: "GET",
      path: "/gateway/bot",
      body: undefined,
      auth: "bot",
    });
    if (typeof answer?.url !== "string")
      return { ok: false, tokenRefused: false, reason: "GET /gateway/bot named no url" };
    return { ok: true, url: answer.url, limit: parseSessionStartLimit(answer.session_start_limit) };
  } catch (error) {
    const refused = error instanceof PlatformError && (error.code === "not_ready" || error.details?.status === 401);
    return { ok: false, tokenRefused: refused, reason: error instanceof Error ? error.message : String(error) };
  }
}

/** Where a shard reports its health in `plugin_problems`. */
export const relaySource = (shard: Shard) => `gateway shard ${shard[0]} of ${shard[1]}`;

/** The connection of one shard, wired to this env (the actor's, or a test's). */
export function relayConnection(
  env: ChatServerEnv,
  shard: Shard,
  store: GatewayConnectionStore,
  overrides: Partial<Pick<GatewayConnectionDeps, "timers" | "session" | "onStopped">> & {
    now?: () => number;
    /** Also told of every health change (the actor keeps the time of a stop). */
    onHealth?: GatewayConnectionDeps["onHealth"];
  } = {},
): GatewayConnection {
  const now = overrides.now ?? Date.now;
  const limiter = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(IDENTIFY_LIMITER));
  return new GatewayConnection({
    session: overrides.session ?? {
      token: env.CHATSERVER_BOT_TOKEN ?? "",
      intents: RELAY_INTENTS,
      shard,
      random: Math.random,
    },
    gatewayBot: () => gatewayBot(env),
    identifySlot: async (key) => {
      const slot = [{ bucket: `identify:${key}`, limit: 1, windowMS: IDENTIFY_WINDOW_MS }];
      const decision = await limiter.takeAll(slot, now());
      return decision.allowed ? 0 : decision.retryAfterSeconds * 1000;
    },
    openSocket: (url) => openGatewaySocket(env, url),
    timers: overrides.timers ?? systemTimers,
    store,
    onDispatch: async (dispatch) => {
      await handleGatewayDispatch(env, dispatch, now());
    },
    onHealth: async (problem) => {
      if (problem)
        await recordPluginProblem(env.DB, { pluginId: PLUGIN_ID, source: relaySource(shard), problem }, now());
      else await clearPluginProblem(env.DB, PLUGIN_ID, relaySource(shard));
      await overrides.onHealth?.(problem);
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

  /**
   * Starts the relay for `shard` unless it runs; answers its status. A relay
   * stopped less than STOPPED_RETRY_MS ago (by this instance or one before an
   * eviction) waits for its alarm instead.
   */
  async start(shard: Shard = [0, 1]): Promise<GatewayStatus> {
    await this.ctx.storage.put("shard", shard);
    const connection = this.connectionFor(shard);
    const status = connection.status();
    const stoppedAt = await this.ctx.storage.get<number>("stoppedAt");
    if (status.phase === "idle" && stoppedAt !== undefined && Date.now() - stoppedAt < STOPPED_RETRY_MS) {
      await this.ctx.storage.setAlarm(stoppedAt + STOPPED_RETRY_MS);
      return { ...status, phase: "stopped" };
    }
    await this.ctx.storage.setAlarm(Date.now() + WATCHDOG_INTERVAL_MS);
    return connection.start();
  }

  async status(): Promise<GatewayStatus> {
    return this.connection?.status() ?? this.idleStatus();
  }

  /** The watchdog: after an eviction this is what brings the relay back (RESUMEing its saved session). */
  override async alarm(): Promise<void> {
    const shard = await this.ctx.storage.get<Shard>("shard");
    if (shard) await this.start(shard);
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
      {
        // The stop outlives an eviction; READY forgets it.
        onStopped: () => void storage.put("stoppedAt", Date.now()),
        onHealth: async (problem) => {
          if (!problem) await storage.delete("stoppedAt");
        },
      },
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
      problem: null,
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
