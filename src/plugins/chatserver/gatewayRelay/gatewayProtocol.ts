/**
 * The chat server's Gateway wire protocol (Discord's, API v10, JSON encoding):
 * the opcodes, intents and close codes the relay and the local fake share.
 */

export const GATEWAY_OP = {
  DISPATCH: 0,
  HEARTBEAT: 1,
  IDENTIFY: 2,
  RESUME: 6,
  RECONNECT: 7,
  INVALID_SESSION: 9,
  HELLO: 10,
  HEARTBEAT_ACK: 11,
} as const;

/**
 * GUILDS (GUILD_DELETE, which releases a claim) | GUILD_MESSAGES |
 * GUILD_MESSAGE_REACTIONS | MESSAGE_CONTENT (privileged: enable it for the bot
 * at the developer portal, or message content arrives empty).
 */
export const GATEWAY_INTENTS = {
  GUILDS: 1 << 0,
  GUILD_MESSAGES: 1 << 9,
  GUILD_MESSAGE_REACTIONS: 1 << 10,
  MESSAGE_CONTENT: 1 << 15,
} as const;

export const RELAY_INTENTS =
  GATEWAY_INTENTS.GUILDS |
  GATEWAY_INTENTS.GUILD_MESSAGES |
  GATEWAY_INTENTS.GUILD_MESSAGE_REACTIONS |
  GATEWAY_INTENTS.MESSAGE_CONTENT;

/** Close codes after which reconnecting cannot help (bad token, shard or intents): the relay stops. */
export const FATAL_CLOSE_CODES: ReadonlySet<number> = new Set([4004, 4010, 4011, 4012, 4013, 4014]);
/** Close codes after which the session is gone: reconnect with a fresh IDENTIFY. */
export const SESSION_ENDING_CLOSE_CODES: ReadonlySet<number> = new Set([4007, 4009]);
/** What the relay closes with when it drops a connection it wants to RESUME (not 1000/1001, which end the session). */
export const RESUMABLE_CLOSE_CODE = 4000;

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
