/**
 * `POST /webhook`: what the chat server sends us, signed with Ed25519.
 *
 * - Interactions (Discord's HTTP interactions): PING (type 1) → PONG; a
 *   command (2), a component clicked or chosen (3) or a modal submitted (5)
 *   is delivered to the project that claimed the server and answered within
 *   the 3 s deadline (interactions.ts).
 * - Events (messages, reactions): the chat server delivers these only over its
 *   Gateway, which the relay actor holds (gatewayRelay/); each is handled by
 *   chatEvents.ts. This endpoint also takes them as signed JSON envelopes shaped
 *   like Discord's webhook events `{ version, application_id, type: 0 (PING) |
 *   1, id, event: { type: "MESSAGE_CREATE" | "MESSAGE_REACTION_ADD", timestamp,
 *   data } }` (another relay may post them). Answered 204.
 *
 * Refusals, with nothing delivered: over 1 MB → 413; unsigned, forged, stale
 * → 401; not JSON → 400; unknown shape → 400; a server no project claimed → 404.
 */
import { PlatformError } from "../../core/errors.ts";
import { parseJsonObject, readBodyBytes } from "../../core/web/jsonBody.ts";
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, verifyEd25519Webhook } from "../../core/crypto/ed25519.ts";
import { EVENT_KINDS, receiveChatEvent } from "./chatEvents.ts";
import { str } from "./deliveryAddress.ts";
import type { ChatServerEnv } from "./env.ts";
import { handleInteraction, isDeliveredInteraction, notConnected } from "./interactions.ts";

export const WEBHOOK_BODY_LIMIT_BYTES = 1024 * 1024;

export async function handleWebhook(request: Request, env: ChatServerEnv, ctx: ExecutionContext): Promise<Response> {
  if (!env.CHATSERVER_PUBLIC_KEY)
    throw new PlatformError("not_ready", "The chat-server plugin has no CHATSERVER_PUBLIC_KEY configured.");
  const raw = await readBodyBytes(request, WEBHOOK_BODY_LIMIT_BYTES);
  const check = await verifyEd25519Webhook(env.CHATSERVER_PUBLIC_KEY, {
    signatureHex: request.headers.get(SIGNATURE_HEADER),
    timestamp: request.headers.get(TIMESTAMP_HEADER),
    rawBody: raw,
  });
  if (!check.ok) {
    if (check.reason === "bad_key") throw new PlatformError("not_ready", check.message);
    throw new PlatformError("unauthorized", check.message);
  }
  const body = parseJsonObject(raw);
  if (body.application_id !== undefined && String(body.application_id) !== env.CHATSERVER_APPLICATION_ID) {
    throw new PlatformError("invalid_input", "The request is for another application.");
  }
  if ("event" in body) return handleEvent(body, env, ctx);
  if (body.type === 1) return Response.json({ type: 1 });
  if (isDeliveredInteraction(body.type)) return handleInteraction(body, env, ctx);
  throw new PlatformError(
    "invalid_input",
    `Unsupported interaction type ${JSON.stringify(body.type ?? null)}: the plugin handles PING (1), APPLICATION_COMMAND (2), MESSAGE_COMPONENT (3) and MODAL_SUBMIT (5).`,
  );
}

async function handleEvent(
  body: Record<string, unknown>,
  env: ChatServerEnv,
  ctx: ExecutionContext,
): Promise<Response> {
  if (body.type === 0) return new Response(null, { status: 204 });
  const event = body.event as { type?: unknown; data?: unknown; timestamp?: unknown } | null;
  if (body.type !== 1 || !event || typeof event !== "object") {
    throw new PlatformError("invalid_input", "An event envelope needs type 1 and an event object.");
  }
  if (!EVENT_KINDS[String(event.type)]) return new Response(null, { status: 204 }); // an event nobody subscribes to
  const data = (event.data ?? {}) as Record<string, unknown>;
  const deliveryId = str(body.id);
  if (!str(data.guild_id) || !deliveryId)
    throw new PlatformError("invalid_input", "An event needs an envelope id and data.guild_id.");
  const receipt = await receiveChatEvent(env, {
    id: deliveryId,
    event: { type: String(event.type), timestamp: event.timestamp, data },
  });
  if (receipt.outcome === "not_connected") throw notConnected(receipt.guildId);
  if (receipt.outcome === "accepted") ctx.waitUntil(receipt.deliver());
  return new Response(null, { status: 204 });
}
