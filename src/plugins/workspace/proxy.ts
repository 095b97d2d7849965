import { PlatformError } from "../../core/errors.ts";
import { parseJsonObject } from "../../core/web/jsonBody.ts";
import {
  requireWorkspaceText,
  WORKSPACE_CHANNEL_ID,
  WORKSPACE_MESSAGE_TS,
  type WorkspaceProxyRoute,
} from "../../contracts/workspaceEvents.ts";
import {
  clearConnectionError,
  expireConnectionToken,
  markConnectionNeedsReconnect,
} from "../../workers/db/connectionsStore.ts";
import { authenticateProjectCall } from "../shared/authenticateProjectCall.ts";
import { takeRateLimit } from "../shared/rateLimit.ts";
import { resolveResourceOwnerRef } from "../shared/resourceOwnerRef.ts";
import { botTokenFor, RECONNECT_HINT } from "./botToken.ts";
import { PLUGIN_ID, type WorkspaceEnv } from "./env.ts";
import { callWorkspaceMethod } from "./workspaceApi.ts";

/**
 * Proxy routes called by `workspace.*` in user code: identity token, the
 * project's rate limit (`actions`), then Slack with the workspace's bot token.
 *
 *   POST /proxy/send-message  { channel, text }             → { channel, ts }
 *   POST /proxy/thread-reply  { channel, threadTs, text }   → { channel, ts, threadTs }
 *   POST /proxy/edit-message  { channel, ts, text }         → { channel, ts }
 *   POST /proxy/add-reaction  { channel, ts, name }         → { ok: true }
 * Each may carry `resource` (the ref from a dispatched event) to name the workspace.
 */

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

  let method: string;
  let params: Record<string, unknown>;
  switch (route) {
    case "send-message":
      method = "chat.postMessage";
      params = { channel: channelOf(body), text: requireWorkspaceText(body.text) };
      break;
    case "thread-reply":
      method = "chat.postMessage";
      params = { channel: channelOf(body), text: requireWorkspaceText(body.text), thread_ts: tsOf(body, "threadTs") };
      break;
    case "edit-message":
      method = "chat.update";
      params = { channel: channelOf(body), ts: tsOf(body, "ts"), text: requireWorkspaceText(body.text) };
      break;
    case "add-reaction":
      method = "reactions.add";
      params = { channel: channelOf(body), timestamp: tsOf(body, "ts"), name: emojiOf(body) };
      break;
  }

  await takeRateLimit(env, project, ["actions"]);
  if (body.resource !== undefined) await resolveResourceOwnerRef(env, body.resource, PLUGIN_ID, project);
  let { token } = await botTokenFor(env, project.id);
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
    if (NEEDS_RECONNECT.has(answer.error)) {
      // The connection needs reconnecting; calls still go to Slack, and the first it accepts clears this.
      await markConnectionNeedsReconnect(env.DB, PLUGIN_ID, project.id, answer.error);
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
  }
}
