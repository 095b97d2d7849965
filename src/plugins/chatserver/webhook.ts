/**
 * `POST /webhook`: what the chat server sends us, signed with Ed25519.
 *
 * - Interactions (Discord's HTTP interactions): PING (type 1) → PONG; an
 *   APPLICATION_COMMAND (type 2) is resolved by `guild_id` to the project that
 *   claimed the server, deduped on the interaction id, answered at once with a
 *   deferred response (type 5, well inside the 3 s deadline), and dispatched
 *   to the project's `/__plugin/chatserver` in `ctx.waitUntil`. The project
 *   answers with `chatserver.reply` (edits the deferred "thinking…" message).
 * - Events (messages, reactions): the chat server delivers these only over its
 *   Gateway, which the relay actor holds (gatewayRelay/); each is handled by
 *   chatEvents.ts. This endpoint also takes them as signed JSON envelopes shaped
 *   like Discord's webhook events `{ version, application_id, type: 0 (PING) |
 *   1, id, event: { type: "MESSAGE_CREATE" | "MESSAGE_REACTION_ADD", timestamp,
 *   data } }` (beyond the spec: another relay may post them). Answered 204.
 *
 * Refusals, with nothing dispatched: over 1 MB → 413; unsigned, forged, stale
 * → 401; not JSON → 400; unknown shape → 400; a server no project claimed → 404.
 */
import { PlatformError } from "../../core/errors.ts";
import { parseJsonObject, readBodyBytes } from "../../core/web/jsonBody.ts";
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, verifyEd25519Webhook } from "../../core/crypto/ed25519.ts";
import { CHAT_ID, type ChatCommandDispatchEvent } from "../../contracts/chatServerEvents.ts";
import type { PluginDispatch, PluginUser } from "../../contracts/pluginDispatch.ts";
import { claimEvent } from "../../workers/db/eventDedupe.ts";
import type { ProjectRow } from "../../workers/db/projectsTable.ts";
import { findResourceOwner } from "../../workers/db/resourceClaims.ts";
import { deliverDispatch } from "../shared/deliverDispatch.ts";
import { callChatServer } from "./chatServerApi.ts";
import { EVENT_KINDS, receiveChatEvent } from "./chatEvents.ts";
import { addressedTo, str, userOf } from "./dispatchAddress.ts";
import { PLUGIN_ID, RESOURCE_TYPE, type ChatServerEnv } from "./env.ts";
import { sealReplyToken } from "./replyToken.ts";

export const WEBHOOK_BODY_LIMIT_BYTES = 1024 * 1024;

function notConnected(guildId: string): PlatformError {
  return new PlatformError(
    "not_found",
    `Server ${guildId} is not connected to any project. Run \`platform plugin install chatserver\` in the project that should receive its commands.`,
  );
}

export async function handleWebhook(request: Request, env: ChatServerEnv, ctx: ExecutionContext): Promise<Response> {
  if (!env.CHATSERVER_PUBLIC_KEY)
    throw new PlatformError("not_ready", "The chat-server plugin has no CHATSERVER_PUBLIC_KEY configured.");
  const raw = await readBodyBytes(request, WEBHOOK_BODY_LIMIT_BYTES);
  const check = await verifyEd25519Webhook(
    env.CHATSERVER_PUBLIC_KEY,
    request.headers.get(SIGNATURE_HEADER),
    request.headers.get(TIMESTAMP_HEADER),
    raw,
  );
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
  if (body.type === 2) return handleCommand(body, env, ctx);
  throw new PlatformError(
    "invalid_input",
    `Unsupported interaction type ${JSON.stringify(body.type ?? null)}: the plugin handles PING (1) and APPLICATION_COMMAND (2).`,
  );
}

async function handleCommand(
  body: Record<string, unknown>,
  env: ChatServerEnv,
  ctx: ExecutionContext,
): Promise<Response> {
  const id = str(body.id);
  const token = str(body.token);
  const data = body.data as { name?: unknown; options?: unknown } | undefined;
  const name = str(data?.name);
  if (!id || !CHAT_ID.test(id) || !token || !name) {
    throw new PlatformError("invalid_input", "An application command needs id, token and data.name.");
  }
  const guildId = str(body.guild_id);
  if (!guildId)
    throw new PlatformError("invalid_input", "Commands are served in servers only (this interaction has no guild_id).");
  const owner = await findResourceOwner(env.DB, PLUGIN_ID, RESOURCE_TYPE, guildId);
  if (!owner) throw notConnected(guildId);

  if (!(await claimEvent(env.DB, PLUGIN_ID, `interaction:${id}`))) {
    // A repeat delivery: acknowledged again, delivered once.
    return Response.json({ type: 5 });
  }
  const member = body.member as { user?: Record<string, unknown>; nick?: unknown } | undefined;
  const rawUser = member?.user ?? (body.user as Record<string, unknown> | undefined);
  const user: PluginUser | undefined = rawUser && str(rawUser.id) ? userOf(rawUser) : undefined;
  const payload: PluginDispatch = {
    kind: "command",
    name,
    event: {
      id,
      name,
      options: Array.isArray(data?.options) ? data.options : [],
      guildId,
      channelId: str(body.channel_id) ?? null,
      locale: str(body.locale) ?? null,
    } satisfies ChatCommandDispatchEvent,
    ...(await addressedTo(env, owner.project, guildId, user)),
    replyToken: await sealReplyToken(env, owner.project.id, { interactionId: id, token, guildId }),
  };
  ctx.waitUntil(deliver(env, owner.project, `interaction:${id}`, payload, token));
  return Response.json({ type: 5 });
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

/**
 * Dispatches to the project. On failure the claim is released (a provider
 * retry gets through) and, for a command, the deferred message says so.
 */
async function deliver(
  env: ChatServerEnv,
  project: ProjectRow,
  dedupeKey: string,
  payload: PluginDispatch,
  interactionToken: string | null,
) {
  const failure = await deliverDispatch(
    env,
    project,
    PLUGIN_ID,
    dedupeKey,
    payload,
    (status) => status < 200 || status > 299,
  );
  if (!failure || !interactionToken) return;
  const path = `/webhooks/${env.CHATSERVER_APPLICATION_ID}/${interactionToken}/messages/@original`;
  const content =
    failure.status === 404
      ? `This server's project does not handle /${payload.name} (yet).`
      : "Sorry, this command failed in the project.";
  await callChatServer(env, "PATCH", path, { content, allowed_mentions: { parse: [] } }, "none").catch(() => {});
}
