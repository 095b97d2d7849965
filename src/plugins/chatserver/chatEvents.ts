/**
 * A message or reaction event, however it arrived (a signed envelope on
 * `/webhook`, or a Gateway dispatch through the relay): resolved by
 * `guild_id` to the project that claimed the server, de-duplicated on the
 * envelope id (`event:<id>`), and handed back ready to deliver to the
 * project's `/__plugin/chatserver`. The envelope is Discord's webhook-event
 * shape `{ id, event: { type, timestamp, data } }`; the relay builds one per
 * Gateway dispatch (gatewayRelay/relayDispatch.ts).
 */
import type {
  ChatEventKind,
  ChatMessageDeliveryEvent,
  ChatReactionDeliveryEvent,
} from "../../contracts/chatServerEvents.ts";
import type { PluginDelivery, PluginUser } from "../../contracts/pluginDelivery.ts";
import { claimEvent } from "../../workers/db/eventDedupe.ts";
import { findResourceOwner } from "../../workers/db/resourceClaims.ts";
import { deliverClaimedEvent } from "../kit/deliverClaimedEvent.ts";
import { addressedTo, str, userOf } from "./deliveryAddress.ts";
import { PLUGIN_ID, RESOURCE_TYPE, type ChatServerEnv } from "./env.ts";

/** Discord event names → the kinds `chatserver.onEvent` takes. */
export const EVENT_KINDS: Record<string, ChatEventKind> = {
  MESSAGE_CREATE: "message",
  MESSAGE_REACTION_ADD: "reaction",
};

export interface ChatEventEnvelope {
  /** Unique per event (the dedupe key is `event:<id>`). */
  id: string;
  event: { type: string; timestamp?: unknown; data: Record<string, unknown> };
}

export type ChatEventReceipt =
  /** Not an event kind the plugin delivers, or a bot's message (never loop on bots). */
  | { outcome: "ignored" }
  /** No project claimed the server. */
  | { outcome: "not_connected"; guildId: string }
  /** Seen before (a provider retry, a replay after RESUME). */
  | { outcome: "duplicate" }
  /** Claimed: `deliver()` delivers it (a failed delivery releases the claim, so a retry gets through). */
  | { outcome: "accepted"; deliver: () => Promise<void> };

export async function receiveChatEvent(env: ChatServerEnv, envelope: ChatEventEnvelope): Promise<ChatEventReceipt> {
  const kind = EVENT_KINDS[envelope.event.type];
  if (!kind) return { outcome: "ignored" };
  const data = envelope.event.data;
  const guildId = str(data.guild_id);
  if (!guildId) return { outcome: "ignored" }; // a direct message: the plugin serves servers only
  const author = data.author as Record<string, unknown> | undefined;
  if (kind === "message" && author?.bot === true) return { outcome: "ignored" };
  const owner = await findResourceOwner(env.DB, PLUGIN_ID, RESOURCE_TYPE, guildId);
  if (!owner) return { outcome: "not_connected", guildId };
  const dedupeKey = `event:${envelope.id}`;
  if (!(await claimEvent(env.DB, PLUGIN_ID, dedupeKey))) return { outcome: "duplicate" };

  const timestamp = str(envelope.event.timestamp) ?? null;
  const userId = kind === "message" ? str(author?.id) : str(data.user_id);
  const user: PluginUser | undefined =
    kind === "message" && author && userId ? userOf(author) : userId ? { id: userId } : undefined;
  const payload: PluginDelivery = {
    kind: "event",
    name: kind,
    event:
      kind === "message"
        ? ({
            type: kind,
            id: str(data.id) ?? null,
            channelId: str(data.channel_id) ?? null,
            guildId,
            content: str(data.content) ?? "",
            timestamp,
          } satisfies ChatMessageDeliveryEvent)
        : ({
            type: kind,
            messageId: str(data.message_id) ?? null,
            channelId: str(data.channel_id) ?? null,
            guildId,
            emoji: str((data.emoji as { name?: unknown } | undefined)?.name) ?? null,
            timestamp,
          } satisfies ChatReactionDeliveryEvent),
    ...(await addressedTo(env, owner.project, guildId, user)),
  };
  return {
    outcome: "accepted",
    deliver: async () => {
      await deliverClaimedEvent(env, {
        project: owner.project,
        pluginId: PLUGIN_ID,
        dedupeKey,
        payload,
        failed: (s) => s < 200 || s > 299,
      });
    },
  };
}
