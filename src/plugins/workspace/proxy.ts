import { PlatformError } from "../../core/errors.ts";
import { parseJsonObject } from "../../core/web/jsonBody.ts";
import { requireBlocks, requireView } from "../../contracts/workspaceBlocks.ts";
import {
  requireWorkspaceText,
  WORKSPACE_CHANNEL_ID,
  WORKSPACE_MESSAGE_TS,
  WORKSPACE_USER_ID,
  type WorkspaceProxyRoute,
} from "../../contracts/workspaceEvents.ts";
import {
  clearConnectionError,
  expireConnectionToken,
  markConnectionNeedsReconnect,
} from "../../workers/db/connectionsStore.ts";
import { authenticateProjectCall } from "../kit/authenticateProjectCall.ts";
import { takeRateLimit } from "../kit/rateLimit.ts";
import { resolveResourceOwnerRef } from "../kit/resourceOwnerRef.ts";
import { botTokenFor, RECONNECT_HINT } from "./botToken.ts";
import { PLUGIN_ID, type WorkspaceEnv } from "./env.ts";
import { openTriggerToken } from "./triggerToken.ts";
import { callWorkspaceMethod } from "./workspaceApi.ts";

/**
 * Proxy routes called by `workspace.*` in user code: identity token, the
 * project's rate limit (`actions`), then Slack with the workspace's bot token.
 *
 *   POST /proxy/send-message    { channel, text, blocks? }             → { channel, ts }
 *   POST /proxy/thread-reply    { channel, threadTs, text, blocks? }   → { channel, ts, threadTs }
 *   POST /proxy/edit-message    { channel, ts, text, blocks? }         → { channel, ts }
 *   POST /proxy/add-reaction    { channel, ts, name }                  → { ok: true }
 *   POST /proxy/send-ephemeral  { channel, user, text, blocks? }       → { channel, messageTs }   only `user` sees it
 *   POST /proxy/open-view       { triggerToken, view }                 → { viewId }   within 3 s of the click
 * Each may carry `resource` (the ref from a delivered event) to name the
 * workspace. What the body says is checked (Block Kit's limits too) before
 * the rate limit and any call.
 */

/** views.open's refusals of a trigger_id: unknown, older than 3 s, or already used for a view. */
const TRIGGER_REFUSALS = new Set(["invalid_trigger_id", "expired_trigger_id", "exchanged_trigger_id"]);

const NEEDS_RECONNECT = new Set([
  "invalid_auth",
  "token_revoked",
  "account_inactive",
  "not_authed",
  "token_expired",
  "no_permission",
  "missing_scope",
]);

function field(body: Record<string, unknown>, name: string, pattern: RegExp, hint: string): string {
  const value = body[name];
  if (typeof value !== "string" || !pattern.test(value))
    throw new PlatformError("invalid_input", `${name} must be ${hint}.`);
  return value;
}

const channelOf = (b: Record<string, unknown>) =>
  field(b, "channel", WORKSPACE_CHANNEL_ID, "a Slack channel id such as C0123456789");
const tsOf = (b: Record<string, unknown>, name: string) =>
  field(b, name, WORKSPACE_MESSAGE_TS, "a Slack message timestamp such as 1712345678.000100");
function emojiOf(body: Record<string, unknown>): string {
  const raw = typeof body.name === "string" ? body.name.replace(/^:|:$/g, "") : "";
  if (!/^[a-z0-9_+'-]{1,100}(::skin-tone-[2-6])?$/.test(raw))
    throw new PlatformError("invalid_input", "name must be an emoji name such as thumbsup (colons optional).");
  return raw;
}

export async function handleProxy(route: WorkspaceProxyRoute, request: Request, env: WorkspaceEnv): Promise<Response> {
  const { project, body: raw } = await authenticateProjectCall(request, env.DB);
  const body = parseJsonObject(raw);

  const { method, params } = callFor(route, body);
  const trigger = route === "open-view" ? await openTriggerToken(env, project.id, body.triggerToken) : null;
  await takeRateLimit(env, project, ["actions"]);
  if (body.resource !== undefined) await resolveResourceOwnerRef(env, body.resource, PLUGIN_ID, project);
  let { token, resource } = await botTokenFor(env, project.id);
  if (trigger) {
    if (trigger.teamId !== resource.external_resource_id)
      throw new PlatformError("forbidden", "That click came from a workspace this project is no longer connected to.");
    params.trigger_id = trigger.triggerId;
  }
  let result = await callWorkspaceMethod(env, method, token, params);
  if (
    !result.answer.ok &&
    result.answer.error === "token_expired" &&
    (await expireConnectionToken(env.DB, PLUGIN_ID, project.id))
  ) {
    // Slack's clock says the token expired before ours did: refresh now and try once more.
    ({ token } = await botTokenFor(env, project.id));
    result = await callWorkspaceMethod(env, method, token, params);
  }

  if (result.retryAfterSeconds !== undefined) {
    throw new PlatformError(
      "rate_limited",
      `Slack is rate limiting ${method} for this workspace. Retry in ${result.retryAfterSeconds} s.`,
      {
        retryAfterSeconds: result.retryAfterSeconds,
        provider: "slack",
      },
    );
  }
  const answer = result.answer;
  if (!answer.ok) {
    if (route === "add-reaction" && answer.error === "already_reacted")
      return Response.json({ ok: true, alreadyReacted: true });
    if (TRIGGER_REFUSALS.has(answer.error))
      throw new PlatformError(
        "invalid_input",
        `Slack refused to open the view (${answer.error}): a view opens only within 3 seconds of the click, once.`,
        { provider: "slack", providerError: answer.error },
      );
    if (NEEDS_RECONNECT.has(answer.error)) {
      // The connection needs reconnecting; calls still go to Slack, and the first it accepts clears this.
      await markConnectionNeedsReconnect(env.DB, { pluginId: PLUGIN_ID, projectId: project.id }, answer.error);
      throw new PlatformError(
        "revoked",
        `Slack refused the workspace's bot token (${answer.error}): the connection needs to be reconnected. ${RECONNECT_HINT}`,
        {
          provider: "slack",
          providerError: answer.error,
        },
      );
    }
    throw new PlatformError("upstream_error", `Slack's ${method} failed: ${answer.error}.`, {
      provider: "slack",
      providerError: answer.error,
    });
  }
  await clearConnectionError(env.DB, PLUGIN_ID, project.id);
  switch (route) {
    case "send-message":
    case "edit-message":
      return Response.json({ channel: answer.channel, ts: answer.ts });
    case "thread-reply":
      return Response.json({ channel: answer.channel, ts: answer.ts, threadTs: params.thread_ts });
    case "add-reaction":
      return Response.json({ ok: true });
    case "send-ephemeral":
      return Response.json({ channel: params.channel, messageTs: answer.message_ts });
    case "open-view":
      return Response.json({ viewId: (answer.view as { id?: unknown } | undefined)?.id ?? null });
  }
}

/** `blocks`, when given, checked; the message's `text` stays its notification and fallback. */
function withBlocks(body: Record<string, unknown>, params: Record<string, unknown>): Record<string, unknown> {
  return body.blocks === undefined ? params : { ...params, blocks: requireBlocks(body.blocks) };
}

/** The Web API method a route calls and its parameters, checked. */
function callFor(
  route: WorkspaceProxyRoute,
  body: Record<string, unknown>,
): { method: string; params: Record<string, unknown> } {
  const text = () => requireWorkspaceText(body.text);
  switch (route) {
    case "send-message":
      return { method: "chat.postMessage", params: withBlocks(body, { channel: channelOf(body), text: text() }) };
    case "thread-reply":
      return {
        method: "chat.postMessage",
        params: withBlocks(body, { channel: channelOf(body), text: text(), thread_ts: tsOf(body, "threadTs") }),
      };
    case "edit-message":
      return {
        method: "chat.update",
        params: withBlocks(body, { channel: channelOf(body), ts: tsOf(body, "ts"), text: text() }),
      };
    case "add-reaction":
      return {
        method: "reactions.add",
        params: { channel: channelOf(body), timestamp: tsOf(body, "ts"), name: emojiOf(body) },
      };
    case "send-ephemeral":
      return {
        method: "chat.postEphemeral",
        params: withBlocks(body, {
          channel: channelOf(body),
          user: field(body, "user", WORKSPACE_USER_ID, "a Slack user id such as U0123456789"),
          text: text(),
        }),
      };
    case "open-view":
      return { method: "views.open", params: { view: requireView(body.view) } };
  }
}
