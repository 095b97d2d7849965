/**
 * Interactions on `POST /webhook` (after the signature check): a slash
 * command (type 2), a button clicked or a select chosen on a message the bot
 * posted (3), a modal submitted (5). Each is resolved by `guild_id` to the
 * project that claimed the server (a server no project claimed: 404, nothing
 * delivered), deduplicated on its id, and delivered to that project's
 * `/__plugin/chatserver` with a sealed reply token; the webhook waits for the
 * handler up to the answer budget (interactionAck.ts). A handler that answers
 * in time answers through the callback endpoint and the webhook says 202; a
 * slower one gets a deferred answer inline and keeps running after it. A
 * delivery that fails is told to the user (interactionFailure.ts).
 */
import { PlatformError } from "../../core/errors.ts";
import {
  CHAT_ID,
  type ChatCommandDeliveryEvent,
  type ChatComponentDeliveryEvent,
  type ChatInteractionMessage,
  type ChatModalDeliveryEvent,
} from "../../contracts/chatServerEvents.ts";
import { modalFieldsFromWire, WIRE } from "../../contracts/chatComponents.ts";
import type { PluginDelivery, PluginUser } from "../../contracts/pluginDelivery.ts";
import { claimEvent } from "../../workers/db/eventDedupe.ts";
import type { ProjectRow } from "../../workers/db/projectsTable.ts";
import { findResourceOwner } from "../../workers/db/resourceClaims.ts";
import { deliverClaimedEvent, type DeliveryFailure } from "../kit/deliverClaimedEvent.ts";
import { addressedTo, str, userOf } from "./deliveryAddress.ts";
import { PLUGIN_ID, RESOURCE_TYPE, type ChatServerEnv } from "./env.ts";
import { claimFirstAnswer, deferredAnswer, withinBudget } from "./interactionAck.ts";
import { failureAnswer, tellFailure } from "./interactionFailure.ts";
import { sealReplyToken, type InteractionKind } from "./replyToken.ts";

/** Interaction types (Discord's) the plugin delivers. */
const INTERACTION_KINDS: Record<number, InteractionKind> = { 2: "command", 3: "component", 5: "modal" };

interface ReceivedInteraction {
  kind: InteractionKind;
  id: string;
  token: string;
  guildId: string;
  /** The command's name, or the component's or modal's customId. */
  name: string;
  messageId: string | null;
  user: PluginUser | undefined;
  event: ChatCommandDeliveryEvent | ChatComponentDeliveryEvent | ChatModalDeliveryEvent;
}

export function isDeliveredInteraction(type: unknown): boolean {
  return typeof type === "number" && type in INTERACTION_KINDS;
}

export function notConnected(guildId: string): PlatformError {
  return new PlatformError(
    "not_found",
    `Server ${guildId} is not connected to any project. Run \`platform plugin install chatserver\` in the project that should receive its commands.`,
  );
}

function interactionMessage(raw: unknown): ChatInteractionMessage | null {
  if (!raw || typeof raw !== "object") return null;
  const m = raw as Record<string, unknown>;
  const id = str(m.id);
  if (!id || !CHAT_ID.test(id)) return null;
  return {
    id,
    channelId: str(m.channel_id) ?? null,
    content: str(m.content) ?? "",
    components: Array.isArray(m.components) ? m.components : [],
  };
}

function customIdOf(data: Record<string, unknown>): string {
  const customId = str(data.custom_id);
  if (!customId || customId.length > 100)
    throw new PlatformError(
      "invalid_input",
      "A component or modal interaction needs data.custom_id (1–100 characters).",
    );
  return customId;
}

/** The interaction's fields the plugin uses, checked; what does not fit is refused before anything is delivered. */
function parseInteraction(body: Record<string, unknown>): ReceivedInteraction {
  const kind = INTERACTION_KINDS[body.type as number]!;
  const id = str(body.id);
  const token = str(body.token);
  const data = (body.data ?? {}) as Record<string, unknown>;
  if (!id || !CHAT_ID.test(id) || !token || typeof body.data !== "object" || body.data === null)
    throw new PlatformError("invalid_input", "An interaction needs id, token and data.");
  const guildId = str(body.guild_id);
  if (!guildId)
    throw new PlatformError("invalid_input", "Interactions are served in servers only (this one has no guild_id).");
  const member = body.member as { user?: Record<string, unknown> } | undefined;
  const rawUser = member?.user ?? (body.user as Record<string, unknown> | undefined);
  const user = rawUser && str(rawUser.id) ? userOf(rawUser) : undefined;
  const common = { guildId, channelId: str(body.channel_id) ?? null, locale: str(body.locale) ?? null };
  const message = interactionMessage(body.message);
  const received = { kind, id, token, guildId, user };
  if (kind === "command") {
    const name = str(data.name);
    if (!name) throw new PlatformError("invalid_input", "An application command needs data.name.");
    const options = Array.isArray(data.options) ? data.options : [];
    return { ...received, name, messageId: null, event: { id, name, options, ...common } };
  }
  const customId = customIdOf(data);
  if (kind === "component") {
    if (!message) throw new PlatformError("invalid_input", "A component interaction needs the message it came from.");
    const values = Array.isArray(data.values) ? data.values.filter((v): v is string => typeof v === "string") : [];
    const event: ChatComponentDeliveryEvent = {
      id,
      customId,
      componentType: data.component_type === WIRE.button ? "button" : "select",
      values,
      message,
      ...common,
    };
    return { ...received, name: customId, messageId: message.id, event };
  }
  const event = { id, customId, fields: modalFieldsFromWire(data.components), message, ...common };
  return { ...received, name: customId, messageId: message?.id ?? null, event };
}

export async function handleInteraction(
  body: Record<string, unknown>,
  env: ChatServerEnv,
  ctx: ExecutionContext,
): Promise<Response> {
  const interaction = parseInteraction(body);
  const { kind, id, guildId, messageId } = interaction;
  const owner = await findResourceOwner(env.DB, PLUGIN_ID, RESOURCE_TYPE, guildId);
  if (!owner) throw notConnected(guildId);

  const deferred = Response.json({ type: deferredAnswer(kind, messageId) });
  const dedupeKey = `interaction:${id}`;
  // A repeat delivery: acknowledged again, delivered once.
  if (!(await claimEvent(env.DB, PLUGIN_ID, dedupeKey))) return deferred;

  const payload: PluginDelivery = {
    kind,
    name: interaction.name,
    event: interaction.event,
    ...(await addressedTo(env, owner.project, guildId, interaction.user)),
    replyToken: await sealReplyToken(env, owner.project.id, {
      interactionId: id,
      token: interaction.token,
      guildId,
      kind,
      messageId,
    }),
  };
  const delivery = deliverInteraction(env, owner.project, dedupeKey, payload);
  const settled = await withinBudget(env, delivery);
  if (!settled) ctx.waitUntil(delivery.then((failure) => failure && tellFailure(env, interaction, failure)));

  if (await claimFirstAnswer(env, id)) {
    // A handler that failed in time: the user hears why, privately.
    return settled?.value ? failureAnswer(env, interaction, settled.value) : deferred;
  }
  // The handler answered through the callback endpoint; Discord takes 202 with no body for that.
  if (settled?.value) ctx.waitUntil(tellFailure(env, interaction, settled.value));
  return new Response(null, { status: 202 });
}

function deliverInteraction(
  env: ChatServerEnv,
  project: ProjectRow,
  dedupeKey: string,
  payload: PluginDelivery,
): Promise<DeliveryFailure | null> {
  return deliverClaimedEvent(env, {
    project,
    pluginId: PLUGIN_ID,
    dedupeKey,
    payload,
    failed: (status) => status < 200 || status > 299,
  });
}
