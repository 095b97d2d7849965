/**
 * What the relay does with a Gateway dispatch:
 *   MESSAGE_CREATE, MESSAGE_REACTION_ADD  → chatEvents.ts, exactly as a signed
 *       webhook event (same envelope, same dedupe key `event:<id>`, same
 *       `/__plugin/chatserver`); the envelope id is `gateway:<session>:<seq>`,
 *       so an event replayed after RESUME is delivered once. A server no
 *       project claimed is skipped.
 *   GUILD_DELETE (not `unavailable`)      → the bot left or was removed: the
 *       claim on the server is released.
 *   anything else                         → ignored.
 */
import { findResourceOwner, releaseResource } from "../../../workers/db/resourceClaims.ts";
import { receiveChatEvent } from "../chatEvents.ts";
import { PLUGIN_ID, RESOURCE_TYPE, type ChatServerEnv } from "../env.ts";
import type { GatewayDispatch } from "./gatewayConnection.ts";

export type RelayOutcome = "delivered" | "duplicate" | "ignored" | "not_connected" | "released";

export async function handleGatewayDispatch(
  env: ChatServerEnv,
  dispatch: GatewayDispatch,
  now: number,
): Promise<RelayOutcome> {
  const data = (dispatch.data ?? {}) as Record<string, unknown>;
  if (dispatch.event === "GUILD_DELETE") {
    if (data.unavailable === true || typeof data.id !== "string") return "ignored"; // an outage, not a removal
    const owner = await findResourceOwner(env.DB, PLUGIN_ID, RESOURCE_TYPE, data.id);
    if (!owner) return "not_connected";
    await releaseResource(env.DB, {
      pluginId: PLUGIN_ID,
      resourceType: RESOURCE_TYPE,
      externalResourceId: data.id,
      projectId: owner.project.id,
    });
    console.log(`chatserver relay: server ${data.id} removed the bot; released its claim by ${owner.project.slug}`);
    return "released";
  }
  const receipt = await receiveChatEvent(env, {
    id: `gateway:${dispatch.sessionId ?? "none"}:${dispatch.seq}`,
    event: {
      type: dispatch.event,
      timestamp: typeof data.timestamp === "string" ? data.timestamp : new Date(now).toISOString(),
      data,
    },
  });
  if (receipt.outcome !== "accepted") return receipt.outcome;
  await receipt.deliver();
  return "delivered";
}
