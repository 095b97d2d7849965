import { errorResponse, PlatformError, type PlatformErrorCode } from "../../core/errors.ts";
import { parseJsonObject, readBodyBytes } from "../../core/web/jsonBody.ts";
import { toPluginProject, type PluginDelivery } from "../../contracts/pluginDelivery.ts";
import type { WorkspaceEvent } from "../../contracts/workspaceEvents.ts";
import { markConnectionRevoked } from "../../workers/db/connectionsStore.ts";
import { claimEvent } from "../../workers/db/eventDedupe.ts";
import { findResourceOwner, releaseResource } from "../../workers/db/resourceClaims.ts";
import { deliverClaimedEvent } from "../kit/deliverClaimedEvent.ts";
import { makeResourceOwnerRef } from "../kit/resourceOwnerRef.ts";
import { PLUGIN_ID, RESOURCE_TYPE, WEBHOOK_BODY_LIMIT, type WorkspaceEnv } from "./env.ts";
import { handleInteractivity, interactivityPayload } from "./interactivity.ts";
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, verifyWorkspaceSignature } from "./workspaceSignature.ts";

/**
 * `POST /webhook`: Slack's Events API and its interactivity payloads (form
 * bodies, interactivity.ts). The raw body is read once (at most
 * 1 MB) and its v0 signature checked before anything is parsed; then
 * `url_verification` echoes the challenge and `event_callback` is routed by
 * team to the project that claimed the workspace, deduplicated on
 * `event_id` (Slack retries until acknowledged) and acknowledged at once,
 * with the delivery to the project's `/__plugin/workspace` running after the
 * answer (`ctx.waitUntil`); after a `/deploy`, only the events the project
 * listens to are delivered. `app_uninstalled` / `tokens_revoked` (of our
 * bot) mark the project's connection revoked and release its claim on the
 * workspace.
 */

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/** Maps Slack's inner event to ours; `null` for events projects do not receive (bot echoes, edits, unknown types). */
export function toWorkspaceEvent(
  inner: Record<string, unknown>,
  teamId: string,
  eventId: string,
  botUserId?: string,
): WorkspaceEvent | null {
  const base = { teamId, eventId, raw: inner };
  switch (inner.type) {
    case "message": {
      // Our own and other bots' messages, edits and deletions are not new messages.
      const subtype = str(inner.subtype);
      if (inner.bot_id || (botUserId && inner.user === botUserId)) return null;
      if (subtype && subtype !== "thread_broadcast" && subtype !== "file_share") return null;
      return {
        ...base,
        type: "message",
        channel: str(inner.channel),
        user: str(inner.user),
        text: str(inner.text),
        ts: str(inner.ts),
        threadTs: str(inner.thread_ts),
      };
    }
    case "app_mention":
      return {
        ...base,
        type: "mention",
        channel: str(inner.channel),
        user: str(inner.user),
        text: str(inner.text),
        ts: str(inner.ts),
        threadTs: str(inner.thread_ts),
      };
    case "reaction_added": {
      const item = (inner.item ?? {}) as Record<string, unknown>;
      return {
        ...base,
        type: "reaction",
        user: str(inner.user),
        reaction: str(inner.reaction),
        item: { channel: str(item.channel), ts: str(item.ts) },
        channel: str(item.channel),
        ts: str(item.ts),
      };
    }
    default:
      return null;
  }
}

function refuse(code: PlatformErrorCode, message: string): Response {
  // X-Slack-No-Retry: a refused request will not become valid by resending it.
  return errorResponse(new PlatformError(code, message), { "X-Slack-No-Retry": "1" });
}

export interface WebhookOptions {
  nowSeconds?: number;
}

export async function handleWebhook(
  request: Request,
  env: WorkspaceEnv,
  ctx: ExecutionContext,
  options: WebhookOptions = {},
): Promise<Response> {
  if (!env.SLACK_SIGNING_SECRET) {
    return errorResponse(
      new PlatformError(
        "not_ready",
        "The workspace-chat plugin has no SLACK_SIGNING_SECRET, so it cannot verify Slack's requests.",
      ),
    );
  }
  let raw: Uint8Array;
  try {
    raw = await readBodyBytes(request, WEBHOOK_BODY_LIMIT);
  } catch (error) {
    if (error instanceof PlatformError && error.code === "payload_too_large") {
      return refuse("payload_too_large", `Webhook body is larger than ${WEBHOOK_BODY_LIMIT} bytes.`);
    }
    throw error;
  }
  const check = await verifyWorkspaceSignature(
    env.SLACK_SIGNING_SECRET,
    {
      timestampHeader: request.headers.get(TIMESTAMP_HEADER),
      signatureHeader: request.headers.get(SIGNATURE_HEADER),
      rawBody: raw,
    },
    options.nowSeconds,
  );
  if (!check.ok) return refuse("unauthorized", `Slack signature check failed (${check.reason}): ${check.message}`);

  try {
    const interactivity = interactivityPayload(raw, request.headers.get("content-type"));
    if (interactivity) return await handleInteractivity(interactivity, env, ctx);
  } catch (error) {
    if (error instanceof PlatformError) return refuse(error.code, error.message);
    throw error;
  }

  let body: Record<string, unknown>;
  try {
    body = parseJsonObject(raw);
  } catch {
    return refuse("malformed_json", "Webhook body must be a JSON object (Events API).");
  }

  if (body.type === "url_verification") {
    if (typeof body.challenge !== "string" || !body.challenge)
      return refuse("invalid_input", "url_verification without a challenge.");
    return new Response(body.challenge, { headers: { "content-type": "text/plain; charset=utf-8" } });
  }
  if (body.type === "app_rate_limited") return new Response(null, { status: 200 });
  if (body.type !== "event_callback")
    return refuse("invalid_input", `Unsupported Events API payload type ${JSON.stringify(body.type)}.`);

  const inner = body.event;
  const eventId = body.event_id;
  const authorization = Array.isArray(body.authorizations)
    ? (body.authorizations[0] as Record<string, unknown> | undefined)
    : undefined;
  const teamId = str(authorization?.team_id) ?? str(body.team_id);
  if (
    !inner ||
    typeof inner !== "object" ||
    Array.isArray(inner) ||
    typeof eventId !== "string" ||
    !eventId ||
    !teamId
  ) {
    return refuse("invalid_input", "event_callback needs event, event_id and team_id.");
  }
  const event = inner as Record<string, unknown>;

  const owner = await findResourceOwner(env.DB, PLUGIN_ID, RESOURCE_TYPE, teamId);
  if (!owner) {
    return refuse(
      "not_found",
      `Slack workspace ${teamId} is not connected to any project on this platform. Install the app with \`platform plugin install workspace\`.`,
    );
  }

  if (event.type === "app_uninstalled" || event.type === "tokens_revoked") {
    const botUserId = (JSON.parse(owner.resource.metadata) as { botUserId?: string }).botUserId;
    const bots = ((event.tokens as { bot?: unknown } | undefined)?.bot ?? []) as unknown[];
    // tokens_revoked may name only user tokens; the bot token is revoked when our bot user is listed.
    if (event.type === "app_uninstalled" || !botUserId || bots.includes(botUserId)) {
      // The app is gone from the workspace: the connection is kept (revoked) for the record, the claim is released
      // so another project can install into the workspace.
      await markConnectionRevoked(env.DB, PLUGIN_ID, owner.project.id);
      await releaseResource(env.DB, {
        pluginId: PLUGIN_ID,
        resourceType: RESOURCE_TYPE,
        externalResourceId: teamId,
        projectId: owner.project.id,
      });
    }
    return new Response(null, { status: 200 });
  }

  const metadata = JSON.parse(owner.resource.metadata) as { botUserId?: string; events?: unknown };
  const mapped = toWorkspaceEvent(event, teamId, eventId, metadata.botUserId);
  if (!mapped) return new Response(null, { status: 200 });
  // After a deploy, only the events the project listens to (workspace.onEvent) are delivered.
  if (Array.isArray(metadata.events) && !metadata.events.includes(mapped.type))
    return new Response(null, { status: 200 });

  if (!(await claimEvent(env.DB, PLUGIN_ID, eventId))) {
    // A retry of an event we already took: acknowledged, not delivered again.
    return new Response(null, { status: 200 });
  }
  const payload: PluginDelivery = {
    kind: "event",
    name: mapped.type,
    event: mapped,
    resource: await makeResourceOwnerRef(env, {
      pluginId: PLUGIN_ID,
      resourceType: RESOURCE_TYPE,
      externalResourceId: teamId,
    }),
    project: toPluginProject(owner.project),
    ...(mapped.user ? { user: { id: mapped.user } } : {}),
  };
  // A 5xx means the project could not take it: Slack's retry is let through. A 4xx would answer the same again.
  ctx.waitUntil(
    deliverClaimedEvent(env, {
      project: owner.project,
      pluginId: PLUGIN_ID,
      dedupeKey: eventId,
      payload,
      failed: (status) => status >= 500,
    }),
  );
  return new Response(null, { status: 200 });
}
