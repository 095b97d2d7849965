/**
 * The fake chat server's user as a guild member object, with every field
 * Discord sends (resources/guild.mdx, guild member object): a client library
 * that reads `joined_at` or `deaf` finds them, as it would on Discord.
 */
import type { MessageAuthor } from "./fakeMessages.ts";

/** When the fake's user joined every guild (Discord's ISO 8601 with microseconds). */
export const MEMBER_JOINED_AT = "2025-01-15T09:30:00.000000+00:00";

/** The member with its user (an interaction, a reaction); `permissions` only where Discord computes them. */
export function guildMember(user: MessageAuthor, options: { permissions?: string } = {}) {
  return {
    ...partialGuildMember(),
    user: { ...user, discriminator: "0", avatar: null, public_flags: 0 },
    ...(options.permissions !== undefined ? { permissions: options.permissions } : {}),
  };
}

/** The member without its user, as MESSAGE_CREATE carries it beside `author`. */
export function partialGuildMember() {
  return {
    nick: null,
    avatar: null,
    banner: null,
    roles: [] as string[],
    joined_at: MEMBER_JOINED_AT,
    premium_since: null,
    deaf: false,
    mute: false,
    flags: 0,
    pending: false,
    communication_disabled_until: null,
    avatar_decoration_data: null,
  };
}
