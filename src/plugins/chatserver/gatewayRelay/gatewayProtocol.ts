/**
 * The chat server's Gateway wire protocol (Discord's, API v10, JSON encoding):
 * the opcodes, intents and close codes the relay and the local fake share.
 */

export const GATEWAY_OP = {
  DISPATCH: 0,
  HEARTBEAT: 1,
  IDENTIFY: 2,
  PRESENCE_UPDATE: 3,
  RESUME: 6,
  RECONNECT: 7,
  INVALID_SESSION: 9,
  HELLO: 10,
  HEARTBEAT_ACK: 11,
} as const;

/**
 * The intents the relay asks for: GUILDS (GUILD_DELETE, which releases a
 * claim) | GUILD_MESSAGES | GUILD_MESSAGE_REACTIONS | MESSAGE_CONTENT.
 * MESSAGE_CONTENT is privileged: unless it is enabled for the bot at the
 * developer portal, the Gateway closes the connection with 4014 (an app that
 * does not ask for it gets messages with empty content instead).
 */
export const GATEWAY_INTENTS = {
  GUILDS: 1 << 0,
  GUILD_MEMBERS: 1 << 1,
  GUILD_PRESENCES: 1 << 8,
  GUILD_MESSAGES: 1 << 9,
  GUILD_MESSAGE_REACTIONS: 1 << 10,
  MESSAGE_CONTENT: 1 << 15,
} as const;

/**
 * Every intent bit the provider defines (gateway.mdx "List of Intents", API
 * v10): bits 0–16, 20, 21, 24 and 25. Any other bit is closed with 4013.
 */
export const KNOWN_INTENTS = (() => {
  let mask = 0;
  for (const bit of [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 20, 21, 24, 25]) mask |= 1 << bit;
  return mask;
})();

/** The privileged intents: each must be enabled for the bot at the developer portal, else close 4014. */
export const PRIVILEGED_INTENTS =
  GATEWAY_INTENTS.GUILD_MEMBERS | GATEWAY_INTENTS.GUILD_PRESENCES | GATEWAY_INTENTS.MESSAGE_CONTENT;

export const RELAY_INTENTS =
  GATEWAY_INTENTS.GUILDS |
  GATEWAY_INTENTS.GUILD_MESSAGES |
  GATEWAY_INTENTS.GUILD_MESSAGE_REACTIONS |
  GATEWAY_INTENTS.MESSAGE_CONTENT;

/**
 * Close codes after which reconnecting at once cannot help (bad token, shard,
 * version or intents): the relay stops, says why in the connection health and
 * tries again only after a long wait (gatewaySession.ts `STOPPED_RETRY_MS`).
 */
export const FATAL_CLOSE_CODES: ReadonlySet<number> = new Set([4004, 4010, 4011, 4012, 4013, 4014]);
/** Close codes after which the session is gone: reconnect with a fresh IDENTIFY (4007 invalid seq, 4009 timed out). */
export const SESSION_ENDING_CLOSE_CODES: ReadonlySet<number> = new Set([4007, 4009]);
/** What the relay closes with when it drops a connection it wants to RESUME (not 1000/1001, which end the session). */
export const RESUMABLE_CLOSE_CODE = 4000;

/** `GET /gateway/bot`'s `session_start_limit` (gateway.mdx "Session Start Limit Object"). */
export interface SessionStartLimit {
  total: number;
  /** IDENTIFYs left before `resetAfterMS`; one more than that makes the provider reset the bot token. */
  remaining: number;
  resetAfterMS: number;
  /** IDENTIFYs allowed per 5 s, one per rate-limit key `shard_id % max_concurrency`. */
  maxConcurrency: number;
}

/** The window of the IDENTIFY rate limit per key (gateway.mdx "Rate Limiting"). */
export const IDENTIFY_WINDOW_MS = 5000;

/** The IDENTIFY rate-limit key of a shard: `shard_id % max_concurrency` (gateway.mdx "Max Concurrency"). */
export function identifyKey(shardId: number, maxConcurrency: number): number {
  return shardId % Math.max(1, maxConcurrency);
}

/** `session_start_limit` from `GET /gateway/bot`'s answer, or null when it is missing or malformed. */
export function parseSessionStartLimit(value: unknown): SessionStartLimit | null {
  const limit = value as { total?: unknown; remaining?: unknown; reset_after?: unknown; max_concurrency?: unknown };
  if (!limit || typeof limit !== "object") return null;
  const { total, remaining, reset_after, max_concurrency } = limit;
  if (![total, remaining, reset_after, max_concurrency].every((n) => typeof n === "number" && Number.isFinite(n)))
    return null;
  return {
    total: total as number,
    remaining: remaining as number,
    resetAfterMS: reset_after as number,
    maxConcurrency: Math.max(1, Math.floor(max_concurrency as number)),
  };
}

export interface GatewayFrame {
  op: number;
  d?: unknown;
  s?: number | null;
  t?: string | null;
}

/** The Gateway URL with the version and encoding the relay speaks. */
export function gatewayConnectUrl(base: string): string {
  const url = new URL(base);
  url.searchParams.set("v", "10");
  url.searchParams.set("encoding", "json");
  return url.toString();
}

/**
 * Which shard receives a server's events: `(guild_id >> 22) % num_shards`
 * (the provider's rule). With one shard (the default) everything is shard 0.
 */
export function shardFor(guildId: string, shardCount: number): number {
  return Number((BigInt(guildId) >> 22n) % BigInt(shardCount));
}

/** A frame from the wire, or null when it is not a JSON object with a numeric `op`. */
export function parseFrame(text: unknown): GatewayFrame | null {
  if (typeof text !== "string") return null;
  try {
    const value = JSON.parse(text) as unknown;
    if (!value || typeof value !== "object" || typeof (value as GatewayFrame).op !== "number") return null;
    return value as GatewayFrame;
  } catch {
    return null;
  }
}
