/**
 * An interaction whose delivery failed (the project's handler threw, or it
 * has none for it), told to the user who interacted, privately where the chat
 * server allows it: within the answer budget, as the webhook's own ephemeral
 * answer; later, as an ephemeral followup or, for a command already deferred,
 * in its "thinking…" message replaced.
 */
import type {
  ChatCommandDeliveryEvent,
  ChatComponentDeliveryEvent,
  ChatModalDeliveryEvent,
} from "../../contracts/chatServerEvents.ts";
import type { DeliveryFailure } from "../kit/deliverClaimedEvent.ts";
import { callChatServer } from "./chatServerApi.ts";
import type { ChatServerEnv } from "./env.ts";
import { CALLBACK, claimFirstReply, EPHEMERAL, hasPlaceholder } from "./interactionAck.ts";
import type { InteractionKind } from "./replyToken.ts";

/** What telling a failure needs of the interaction. */
interface FailedInteraction {
  kind: InteractionKind;
  id: string;
  token: string;
  /** The command's name, or the component's or modal's customId. */
  name: string;
  messageId: string | null;
  event: ChatCommandDeliveryEvent | ChatComponentDeliveryEvent | ChatModalDeliveryEvent;
}

const NO_MENTIONS = { parse: [] as string[] };

/** The webhook's first answer for a delivery that failed in time: the reason, privately. */
export async function failureAnswer(
  env: ChatServerEnv,
  interaction: FailedInteraction,
  failure: DeliveryFailure,
): Promise<Response> {
  await claimFirstReply(env, interaction.id);
  return Response.json({
    type: CALLBACK.message,
    data: { content: failureText(interaction, failure), flags: EPHEMERAL, allowed_mentions: NO_MENTIONS },
  });
}

/**
 * A failed delivery after the first answer was given: a command's
 * "thinking…" message (not yet replaced by a reply) says so; otherwise an
 * ephemeral followup does.
 */
export async function tellFailure(env: ChatServerEnv, interaction: FailedInteraction, failure: DeliveryFailure) {
  const webhook = `/webhooks/${env.CHATSERVER_APPLICATION_ID}/${interaction.token}`;
  const content = failureText(interaction, failure);
  const replacePlaceholder =
    hasPlaceholder(interaction.kind, interaction.messageId) && (await claimFirstReply(env, interaction.id));
  await (replacePlaceholder
    ? callChatServer(env, {
        method: "PATCH",
        path: `${webhook}/messages/@original`,
        body: { content, allowed_mentions: NO_MENTIONS },
        auth: "none",
      })
    : callChatServer(env, {
        method: "POST",
        path: webhook,
        body: { content, flags: EPHEMERAL, allowed_mentions: NO_MENTIONS },
        auth: "none",
      })
  ).catch(() => {});
}

function failureText(interaction: FailedInteraction, failure: DeliveryFailure): string {
  if (failure.status !== 404) return `Sorry, this ${what(interaction)} failed in the project.`;
  return interaction.kind === "command"
    ? `This server's project does not handle /${interaction.name} (yet).`
    : `This server's project does not handle this ${what(interaction)} (yet).`;
}

function what(interaction: FailedInteraction): string {
  if (interaction.kind === "command") return "command";
  if (interaction.kind === "modal") return "form";
  return (interaction.event as ChatComponentDeliveryEvent).componentType;
}
