/**
 * A local fake of the workspace provider (Slack) for `platform dev` and
 * tests: the real wire protocol (OAuth v2 with token rotation, Web API with
 * `ok:false` errors and 429 + Retry-After, v0-signed Events API deliveries),
 * and it checks what it receives: client credentials, single-use codes and
 * refresh tokens, redirect_uri, Bearer tokens, channels and message timestamps.
 *
 * State is in memory, one instance per `createFakeWorkspace` call.
 *
 * Routes
 *   GET  /oauth/v2/authorize?client_id&scope&redirect_uri&state[&team]  consent page
 *   POST /oauth/v2/authorize                                   Allow / Cancel from that page
 *   POST /api/oauth.v2.access                                  code or refresh_token grant
 *   POST /api/chat.postMessage | chat.update | chat.postEphemeral | reactions.add   Web API (Bearer bot
 *                                                              token); a message needs text, blocks or attachments
 *                                                              (else no_text); blocks keep Block Kit's rules
 *                                                              (fakeBlockRules.ts, else invalid_blocks)
 *   POST /api/views.open {trigger_id, view}                    a modal, within 3 s of the click's trigger_id
 *                                                              (else expired_trigger_id), once (else
 *                                                              exchanged_trigger_id); view checked
 *                                                              (invalid_arguments)
 *   POST /actions/{team}/{n}/{secret}                          a click's response_url (fakeResponseUrls.ts): a
 *                                                              JSON message, `replace_original`,
 *                                                              `delete_original`, `response_type` ephemeral (the
 *                                                              default) or in_channel; 5 uses in 30 minutes
 *   POST /api/auth.test                                        who the token is (team, bot user, bot id)
 *   POST /api/auth.revoke                                      revokes the token presented (the team's bot tokens)
 *   POST /__fake/trigger {kind, teamId, text?, retry?}         signs and delivers an event to the plugin
 *                                                              (`resourceId` names the team as well); kind
 *                                                              `action` {actionId, value?, channel?, message?}
 *                                                              clicks an element a message shows (block_actions),
 *                                                              `view` {callbackId, fields} submits an open view
 *                                                              (view_submission): form bodies `payload=<JSON>`;
 *                                                              the answer's `response_action` "update" replaces
 *                                                              the view (checked as views.open checks one),
 *                                                              "errors" keeps it open, "clear" or none closes it
 *   GET  /__fake/chat?resourceId=<team>                        its channels as its user sees them, and the open
 *                                                              views (chatView.ts)
 *   POST /__fake/token-rotation {enabled, expiresIn?}          the app's token rotation (installs after it)
 *   POST /__fake/refuse-refresh {error?, count?}               the next refresh grants fail with `error`
 *   POST /__fake/ratelimit {method?, retryAfter?, count?}      the next calls answer 429
 *   POST /__fake/revoke {teamId}                               revokes the team's tokens (as an uninstall does)
 *   POST /__fake/expire {teamId}                               expires the team's rotating access tokens now
 *   GET  /__fake/recorded                                      API calls received
 *   POST /__fake/reset
 */
import { hex, randomHex } from "../../../core/crypto/encoding.ts";
import { importKey } from "../../../core/crypto/keys.ts";
import { formDecode } from "../../../core/web/basicAuthorization.ts";
import { escapeHtml } from "../../../core/web/html.ts";
import type { ChatView } from "../chatView.ts";
import {
  findElement,
  messageBlocksRefusal,
  optionWithValue,
  viewRefusal,
  withGeneratedIds,
  type BlockRefusal,
} from "./fakeBlockRules.ts";
import { createResponseUrls, RESPONSE_URL_PATH } from "./fakeResponseUrls.ts";
import { workspaceView, type OpenView, type ViewedMessage } from "./fakeWorkspaceView.ts";
import { PAGE_ICON } from "../../../core/web/pageIcon.ts";

export interface FakeWorkspaceConfig {
  clientId: string;
  clientSecret: string;
  signingSecret: string;
  /** Full URL of the plugin's Events API endpoint, e.g. http://127.0.0.1:8790/webhook. */
  webhookUrl: string;
  /** When set, access tokens expire and come with single-use refresh tokens. */
  tokenRotation?: boolean;
  /** Access-token lifetime with rotation on, in seconds (Slack: 43200). */
  expiresIn?: number;
  /** Redirect URIs the app registered; empty = any absolute http(s) URL. */
  redirectUris?: string[];
  apiAppId?: string;
  /** How deliveries reach the plugin (a service binding in tests); default: global fetch. */
  deliver?: (request: Request) => Promise<Response>;
  /** Where the fake is reachable, for the response_urls it hands out (default: the origin a trigger came to). */
  baseUrl?: string;
  now?: () => number;
}

export interface RecordedCall {
  method: string;
  /** Bearer token presented, if any. */
  token: string | null;
  params: Record<string, unknown>;
  /** What the fake answered: `ok` and `error`, or the HTTP status for 429. */
  status: number;
  ok: boolean;
  error?: string;
  at: number;
}

interface TeamInfo {
  id: string;
  name: string;
  botUserId: string;
}

interface AuthCode {
  team: TeamInfo;
  redirectUri: string;
  scope: string;
  userId: string;
  expiresAt: number;
}

interface AccessToken {
  teamId: string;
  expiresAt: number | null;
  revoked: boolean;
}

interface Message extends ViewedMessage {
  reactions: Set<string>;
}

export const FAKE_CHANNELS = ["C0GENERAL", "C0RANDOM"] as const;
export const FAKE_CHANNEL_NAMES: Record<string, string> = { C0GENERAL: "general", C0RANDOM: "random" };
/** How long a trigger_id opens a view after the click (Slack: 3 seconds), once. */
const TRIGGER_TTL_MS = 3_000;

/** A JSON field of a Web API call: a string in a form body, a value in a JSON one. */
function jsonParam(value: unknown): unknown {
  return typeof value === "string" ? JSON.parse(value) : value;
}

/**
 * A message's `text` and `blocks`: `text` is only a fallback once there are blocks or attachments ("not
 * enforced as required when using blocks", chat.postMessage), so `no_text` is for a message with none of them;
 * blocks must keep Block Kit's rules (fakeBlockRules.ts), else `invalid_blocks`; Slack fills in missing ids.
 */
function messageBody(params: Record<string, unknown>): { text: string; blocks?: unknown[] } | BlockRefusal | string {
  const text = typeof params.text === "string" ? params.text : "";
  let blocks: unknown;
  let attachments: unknown;
  try {
    blocks = jsonParam(params.blocks);
    attachments = jsonParam(params.attachments);
  } catch {
    return "invalid_blocks_format";
  }
  if (blocks !== undefined) {
    const refusal = messageBlocksRefusal(blocks);
    if (refusal) return refusal;
  }
  const hasBlocks = Array.isArray(blocks) && blocks.length > 0;
  const hasAttachments = Array.isArray(attachments) && attachments.length > 0;
  if (!text && !hasBlocks && !hasAttachments) return "no_text";
  return hasBlocks ? { text, blocks: withGeneratedIds(blocks as unknown[]) } : { text };
}

function refused(body: ReturnType<typeof messageBody>): body is BlockRefusal | string {
  return typeof body === "string" || "error" in body;
}

/** Slack's `ok: false` answer to a body `messageBody` refused. */
function refusalBody(refusal: BlockRefusal | string): Record<string, unknown> {
  return typeof refusal === "string"
    ? { ok: false, error: refusal }
    : { ok: false, error: refusal.error, response_metadata: { messages: refusal.messages } };
}

export const FAKE_USER_ID = "U0ALICE";
export const FAKE_USER_NAME = "alice";
export const DEFAULT_TEAM = { id: "T0TEST", name: "Test Workspace" };

function teamInfo(id: string): TeamInfo {
  const name = id === DEFAULT_TEAM.id ? DEFAULT_TEAM.name : `Workspace ${id}`;
  return { id, name, botUserId: `U0BOT${id.slice(1)}` };
}

async function hmacHex(secret: string, data: string): Promise<string> {
  return hex(await crypto.subtle.sign("HMAC", await importKey(secret, "HMAC-SHA256"), new TextEncoder().encode(data)));
}

/** Web API answer: Slack reports almost every failure as HTTP 200 with `ok:false`. */
function apiJson(body: Record<string, unknown>, status = 200, headers: Record<string, string> = {}): Response {
  return Response.json(body, { status, headers });
}

/** Reads a Web API body: form or JSON, as Slack accepts both. */
async function readParams(request: Request): Promise<Record<string, unknown> | null> {
  const type = request.headers.get("content-type") ?? "";
  const text = await request.text();
  if (type.includes("application/json")) {
    try {
      const value = JSON.parse(text);
      return typeof value === "object" && value && !Array.isArray(value) ? value : null;
    } catch {
      return null;
    }
  }
  return Object.fromEntries(new URLSearchParams(text));
}

export function createFakeWorkspace(config: FakeWorkspaceConfig) {
  const now = config.now ?? (() => Date.now());
  const apiAppId = config.apiAppId ?? "A0PLATFORM";
  const codes = new Map<string, AuthCode>();
  const tokens = new Map<string, AccessToken>();
  const refreshTokens = new Map<string, { teamId: string; used: boolean }>();
  const messages = new Map<string, Message>();
  const recorded: RecordedCall[] = [];
  let rateLimit: { method: string | null; retryAfter: number; count: number } | null = null;
  /** Token rotation as the app is configured (switchable: `POST /__fake/token-rotation`). */
  let rotation = { enabled: Boolean(config.tokenRotation), expiresIn: config.expiresIn ?? 43_200 };
  /** The next refresh grants refused with this error (`POST /__fake/refuse-refresh`). */
  let refreshRefusal: { error: string; count: number } | null = null;
  /** trigger_id → the click it came from. */
  const triggers = new Map<string, { teamId: string; userId: string; issuedAt: number; used: boolean }>();
  const views = new Map<string, OpenView>();
  const responseUrls = createResponseUrls(now);
  let seq = 0;
  let lastDelivery: { envelope: Record<string, unknown>; retries: number } | null = null;

  function nextTs(): string {
    seq += 1;
    return `${Math.floor(now() / 1000)}.${String(seq).padStart(6, "0")}`;
  }

  function issueTokens(team: TeamInfo): Record<string, unknown> {
    const access = `xoxb-${team.id}-${randomHex(12)}`;
    const { enabled, expiresIn } = rotation;
    const stored: AccessToken = {
      teamId: team.id,
      expiresAt: enabled ? now() + expiresIn * 1000 : null,
      revoked: false,
    };
    const accessToken = enabled ? `xoxe.${access}` : access;
    tokens.set(accessToken, stored);
    const out: Record<string, unknown> = { access_token: accessToken, token_type: "bot" };
    if (enabled) {
      const refresh = `xoxe-1-${randomHex(16)}`;
      refreshTokens.set(refresh, { teamId: team.id, used: false });
      out.refresh_token = refresh;
      out.expires_in = expiresIn;
    }
    return out;
  }

  function clientAuth(request: Request, params: Record<string, unknown>): string | null {
    let id = typeof params.client_id === "string" ? params.client_id : null;
    let secret = typeof params.client_secret === "string" ? params.client_secret : null;
    const basic = /^Basic\s+(.+)$/i.exec(request.headers.get("authorization") ?? "");
    if (basic) {
      try {
        const [u, p] = atob(basic[1]!).split(":");
        id = formDecode(u ?? "");
        secret = formDecode(p ?? "");
      } catch {
        return "invalid_client_id";
      }
    }
    if (!id || id !== config.clientId) return "invalid_client_id";
    if (!secret || secret !== config.clientSecret) return "bad_client_secret";
    return null;
  }

  async function oauthAccess(request: Request): Promise<Response> {
    const params = await readParams(request);
    if (!params) return apiJson({ ok: false, error: "invalid_arguments" });
    const authError = clientAuth(request, params);
    if (authError) return apiJson({ ok: false, error: authError });
    const grant = params.grant_type ?? "authorization_code";
    if (grant === "refresh_token") {
      const refresh = typeof params.refresh_token === "string" ? params.refresh_token : "";
      const entry = refreshTokens.get(refresh);
      if (!entry || entry.used) return apiJson({ ok: false, error: "invalid_refresh_token" });
      if (refreshRefusal && refreshRefusal.count > 0) {
        refreshRefusal.count -= 1;
        const { error } = refreshRefusal;
        if (refreshRefusal.count === 0) refreshRefusal = null;
        return apiJson({ ok: false, error });
      }
      entry.used = true; // single use: the old refresh token is now dead
      const team = teamInfo(entry.teamId);
      if ([...tokens.values()].some((t) => t.teamId === team.id && t.revoked)) {
        // An uninstalled app cannot refresh its way back in.
        return apiJson({ ok: false, error: "invalid_refresh_token" });
      }
      return apiJson({
        ok: true,
        app_id: apiAppId,
        team: { id: team.id, name: team.name },
        bot_user_id: team.botUserId,
        ...issueTokens(team),
      });
    }
    if (grant !== "authorization_code") return apiJson({ ok: false, error: "invalid_grant_type" });
    const code = typeof params.code === "string" ? params.code : "";
    const entry = codes.get(code);
    if (!entry || entry.expiresAt < now()) return apiJson({ ok: false, error: "invalid_code" });
    codes.delete(code); // single use
    if (params.redirect_uri !== entry.redirectUri) return apiJson({ ok: false, error: "bad_redirect_uri" });
    const team = entry.team;
    return apiJson({
      ok: true,
      app_id: apiAppId,
      scope: entry.scope,
      bot_user_id: team.botUserId,
      team: { id: team.id, name: team.name },
      enterprise: null,
      is_enterprise_install: false,
      authed_user: { id: entry.userId },
      ...issueTokens(team),
    });
  }

  function authorizePage(url: URL): Response {
    const clientId = url.searchParams.get("client_id");
    const redirectUri = url.searchParams.get("redirect_uri") ?? "";
    const state = url.searchParams.get("state") ?? "";
    const scope = url.searchParams.get("scope") ?? "";
    const team = teamInfo(url.searchParams.get("team") || DEFAULT_TEAM.id);
    if (clientId !== config.clientId) return new Response("Invalid client_id parameter", { status: 400 });
    if (!redirectUriAllowed(redirectUri))
      return new Response("redirect_uri did not match any configured URIs.", { status: 400 });
    const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;
    const html = `<!doctype html><html><head><meta charset="utf-8"><title>Install to ${escapeHtml(team.name)}</title>${PAGE_ICON}</head>
<body><h1>Platform (fake Slack) is requesting permission to access the ${escapeHtml(team.name)} Slack workspace</h1>
<p>Workspace: <strong>${escapeHtml(team.name)}</strong> (<code>${team.id}</code>)</p>
<p>Scopes: ${escapeHtml(scope)}</p>
<form method="post" action="/oauth/v2/authorize">
${hidden("client_id", clientId)}${hidden("redirect_uri", redirectUri)}${hidden("state", state)}${hidden("scope", scope)}${hidden("team", team.id)}
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="cancel">Cancel</button>
</form></body></html>`;
    return new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } });
  }

  function redirectUriAllowed(uri: string): boolean {
    if (config.redirectUris?.length) return config.redirectUris.includes(uri);
    try {
      const u = new URL(uri);
      return u.protocol === "http:" || u.protocol === "https:";
    } catch {
      return false;
    }
  }

  async function authorizeDecision(request: Request): Promise<Response> {
    const form = new URLSearchParams(await request.text());
    const redirectUri = form.get("redirect_uri") ?? "";
    if (form.get("client_id") !== config.clientId || !redirectUriAllowed(redirectUri)) {
      return new Response("Invalid authorization request.", { status: 400 });
    }
    const target = new URL(redirectUri);
    const state = form.get("state") ?? "";
    if (form.get("decision") === "allow") {
      const code = `${randomHex(4)}.${randomHex(20)}`;
      codes.set(code, {
        team: teamInfo(form.get("team") || DEFAULT_TEAM.id),
        redirectUri,
        scope: form.get("scope") ?? "",
        userId: FAKE_USER_ID,
        expiresAt: now() + 10 * 60_000,
      });
      target.searchParams.set("code", code);
    } else {
      target.searchParams.set("error", "access_denied");
    }
    if (state) target.searchParams.set("state", state);
    return Response.redirect(target.toString(), 302);
  }

  async function webApi(method: string, request: Request): Promise<Response> {
    const bearer = /^Bearer\s+(\S+)$/i.exec(request.headers.get("authorization") ?? "")?.[1] ?? null;
    const params = (await readParams(request)) ?? {};
    const record = (status: number, body: Record<string, unknown>, headers: Record<string, string> = {}) => {
      recorded.push({
        method,
        token: bearer,
        params,
        status,
        ok: body.ok === true,
        error: body.error as string | undefined,
        at: now(),
      });
      return apiJson(body, status, headers);
    };
    if (rateLimit && rateLimit.count > 0 && (!rateLimit.method || rateLimit.method === method)) {
      rateLimit.count -= 1;
      const retryAfter = rateLimit.retryAfter;
      if (rateLimit.count === 0) rateLimit = null;
      return record(429, { ok: false, error: "ratelimited" }, { "Retry-After": String(retryAfter) });
    }
    if (!bearer) return record(200, { ok: false, error: "not_authed" });
    const token = tokens.get(bearer);
    if (!token) return record(200, { ok: false, error: "invalid_auth" });
    if (token.revoked) return record(200, { ok: false, error: "token_revoked" });
    if (token.expiresAt !== null && token.expiresAt <= now()) return record(200, { ok: false, error: "token_expired" });
    if (method === "auth.revoke") {
      // Slack revokes the token presented (and, for a bot token, removes the bot: its team's tokens die with it).
      revokeTeam(token.teamId);
      return record(200, { ok: true, revoked: true });
    }
    const team = teamInfo(token.teamId);
    if (method === "auth.test") {
      // Who the token is (docs.slack.dev/reference/methods/auth.test): a bot token names its bot user and bot id.
      return record(200, {
        ok: true,
        url: `https://${team.id.toLowerCase()}.slack.fake/`,
        team: team.name,
        user: "platform-bot",
        team_id: team.id,
        user_id: team.botUserId,
        bot_id: `B0BOT${team.id.slice(1)}`,
        is_enterprise_install: false,
      });
    }
    if (method === "views.open") return record(200, openView(params, team.id));
    if (!["chat.postMessage", "chat.update", "chat.postEphemeral", "reactions.add"].includes(method))
      return record(200, { ok: false, error: "unknown_method" });
    const channel = typeof params.channel === "string" ? params.channel : "";
    if (!(FAKE_CHANNELS as readonly string[]).includes(channel))
      return record(200, { ok: false, error: "channel_not_found" });
    const key = (ts: string) => `${team.id}/${channel}/${ts}`;

    if (method === "chat.postEphemeral") {
      const body = messageBody(params);
      if (refused(body)) return record(200, refusalBody(body));
      const user = typeof params.user === "string" ? params.user : "";
      if (user !== FAKE_USER_ID) return record(200, { ok: false, error: "user_not_in_channel" });
      const ts = nextTs();
      messages.set(key(ts), {
        channel,
        ts,
        text: body.text,
        ...(body.blocks ? { blocks: body.blocks } : {}),
        user: team.botUserId,
        teamId: team.id,
        reactions: new Set(),
        ephemeralTo: user,
      });
      return record(200, { ok: true, message_ts: ts });
    }
    if (method === "chat.postMessage") {
      const body = messageBody(params);
      if (refused(body)) return record(200, refusalBody(body));
      const { text } = body;
      if (text.length > 40_000) return record(200, { ok: false, error: "msg_too_long" });
      const threadTs = typeof params.thread_ts === "string" ? params.thread_ts : undefined;
      if (threadTs && !messages.has(key(threadTs))) return record(200, { ok: false, error: "thread_not_found" });
      const ts = nextTs();
      const message: Message = {
        channel,
        ts,
        text,
        ...(body.blocks ? { blocks: body.blocks } : {}),
        user: team.botUserId,
        teamId: team.id,
        threadTs,
        reactions: new Set(),
      };
      messages.set(key(ts), message);
      return record(200, {
        ok: true,
        channel,
        ts,
        message: {
          type: "message",
          user: team.botUserId,
          text,
          ts,
          ...(body.blocks ? { blocks: body.blocks } : {}),
          ...(threadTs ? { thread_ts: threadTs } : {}),
        },
      });
    }
    if (method === "chat.update") {
      const ts = typeof params.ts === "string" ? params.ts : "";
      const message = messages.get(key(ts));
      if (!message || message.ephemeralTo) return record(200, { ok: false, error: "message_not_found" });
      if (message.user !== team.botUserId) return record(200, { ok: false, error: "cant_update_message" });
      const body = messageBody(params);
      if (refused(body)) return record(200, refusalBody(body));
      const { text } = body;
      message.text = text;
      message.edited = true;
      // Blocks not given are kept; an empty array removes them (chat.update).
      if (body.blocks) message.blocks = body.blocks;
      else if (params.blocks !== undefined) delete message.blocks;
      return record(200, {
        ok: true,
        channel,
        ts,
        text,
        message: {
          type: "message",
          user: message.user,
          text,
          ts,
          ...(message.blocks ? { blocks: message.blocks } : {}),
        },
      });
    }
    // reactions.add
    const ts = typeof params.timestamp === "string" ? params.timestamp : "";
    const name = typeof params.name === "string" ? params.name : "";
    if (!name || !/^[a-z0-9_+'-]+(::skin-tone-[2-6])?$/.test(name))
      return record(200, { ok: false, error: "invalid_name" });
    const message = messages.get(key(ts));
    if (!message) return record(200, { ok: false, error: "message_not_found" });
    if (message.reactions.has(name)) return record(200, { ok: false, error: "already_reacted" });
    message.reactions.add(name);
    return record(200, { ok: true });
  }

  function revokeTeam(teamId: string): void {
    for (const token of tokens.values()) if (token.teamId === teamId) token.revoked = true;
    for (const refresh of refreshTokens.values()) if (refresh.teamId === teamId) refresh.used = true;
  }

  /** A message in the fake's store, as if a person had posted it (so reactions and threads can target it). */
  function userMessage(teamId: string, channel: string, text: string): Message {
    const ts = nextTs();
    const message: Message = { channel, ts, text, user: FAKE_USER_ID, teamId, reactions: new Set() };
    messages.set(`${teamId}/${channel}/${ts}`, message);
    return message;
  }

  function buildEvent(kind: string, team: TeamInfo, text: string, channel: string): Record<string, unknown> | null {
    const eventTs = nextTs();
    switch (kind) {
      case "message": {
        const m = userMessage(team.id, channel, text);
        return { type: "message", channel, user: m.user, text, ts: m.ts, event_ts: m.ts, channel_type: "channel" };
      }
      case "mention": {
        const full = `<@${team.botUserId}> ${text}`;
        const m = userMessage(team.id, channel, full);
        return { type: "app_mention", channel, user: m.user, text: full, ts: m.ts, event_ts: m.ts };
      }
      case "reaction": {
        const m = userMessage(team.id, channel, "a message to react to");
        return {
          type: "reaction_added",
          user: FAKE_USER_ID,
          reaction: text || "thumbsup",
          item_user: m.user,
          item: { type: "message", channel, ts: m.ts },
          event_ts: eventTs,
        };
      }
      case "app_uninstalled":
        return { type: "app_uninstalled", event_ts: eventTs };
      case "tokens_revoked":
        return { type: "tokens_revoked", tokens: { oauth: [], bot: [team.botUserId] }, event_ts: eventTs };
      default:
        return null;
    }
  }

  async function deliver(
    body: string,
    retryNum: number,
    contentType = "application/json",
  ): Promise<{ status: number; body: string; contentType: string | null }> {
    const ts = String(Math.floor(now() / 1000));
    const signature = "v0=" + (await hmacHex(config.signingSecret, `v0:${ts}:${body}`));
    const headers: Record<string, string> = {
      "content-type": contentType,
      "X-Slack-Request-Timestamp": ts,
      "X-Slack-Signature": signature,
      "User-Agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
    };
    if (retryNum > 0) {
      headers["X-Slack-Retry-Num"] = String(retryNum);
      headers["X-Slack-Retry-Reason"] = "http_timeout";
    }
    const request = new Request(config.webhookUrl, { method: "POST", headers, body });
    const response = await (config.deliver ? config.deliver(request) : fetch(request));
    return { status: response.status, body: await response.text(), contentType: response.headers.get("content-type") };
  }

  // ------------------------------------------------------------------ interactivity

  /** A trigger_id for a click or a submit: it opens one view within 3 seconds. */
  function issueTrigger(teamId: string): string {
    const id = `${Math.floor(now() / 1000)}.${Math.floor(Math.random() * 1e12)}.${randomHex(16)}`;
    triggers.set(id, { teamId, userId: FAKE_USER_ID, issuedAt: now(), used: false });
    return id;
  }

  /** `views.open`: a modal for the user who clicked, with the click's trigger_id (3 s, once). */
  function openView(params: Record<string, unknown>, teamId: string): Record<string, unknown> {
    const trigger = triggers.get(typeof params.trigger_id === "string" ? params.trigger_id : "");
    if (!trigger || trigger.teamId !== teamId) return { ok: false, error: "invalid_trigger_id" };
    if (trigger.used) return { ok: false, error: "exchanged_trigger_id" };
    if (now() - trigger.issuedAt > TRIGGER_TTL_MS) return { ok: false, error: "expired_trigger_id" };
    let view: unknown;
    try {
      view = jsonParam(params.view);
    } catch {
      return { ok: false, error: "invalid_arguments", response_metadata: { messages: ["[ERROR] view: invalid JSON"] } };
    }
    const refusal = viewRefusal(view);
    if (refusal) return refusalBody(refusal);
    trigger.used = true;
    const v = view as Record<string, unknown>;
    const opened: OpenView = {
      id: `V0${randomHex(5).toUpperCase()}`,
      teamId,
      userId: trigger.userId,
      callbackId: typeof v.callback_id === "string" ? v.callback_id : "",
      privateMetadata: typeof v.private_metadata === "string" ? v.private_metadata : "",
      title: v.title as Record<string, unknown>,
      ...(v.submit ? { submit: v.submit as Record<string, unknown> } : {}),
      blocks: withGeneratedIds(v.blocks as unknown[]),
      hash: `${Math.floor(now() / 1000)}.${randomHex(4)}`,
    };
    views.set(opened.id, opened);
    return { ok: true, view: { ...viewPayload(opened), state: { values: {} } } };
  }

  function viewPayload(view: OpenView): Record<string, unknown> {
    return {
      id: view.id,
      team_id: view.teamId,
      type: "modal",
      callback_id: view.callbackId,
      private_metadata: view.privateMetadata,
      title: view.title,
      ...(view.submit ? { submit: view.submit } : {}),
      blocks: view.blocks,
      hash: view.hash,
      app_id: apiAppId,
    };
  }

  const userPayload = (team: TeamInfo) => ({
    id: FAKE_USER_ID,
    username: FAKE_USER_NAME,
    name: FAKE_USER_NAME,
    team_id: team.id,
  });

  const refusedTrigger = (error: string) => Response.json({ error }, { status: 400 });

  /** A click on a button or a choice in a select of a message the bot posted (`block_actions`). */
  function blockActions(
    team: TeamInfo,
    params: Record<string, unknown>,
    origin: string,
  ): Record<string, unknown> | Response {
    const actionId = typeof params.actionId === "string" ? params.actionId : "";
    if (!actionId) return refusedTrigger("an action needs actionId");
    const channel = typeof params.channel === "string" ? params.channel : null;
    const ts = typeof params.message === "string" ? params.message : null;
    const message = [...messages.values()]
      .reverse()
      .find(
        (m) =>
          m.teamId === team.id &&
          (!channel || m.channel === channel) &&
          (!ts || m.ts === ts) &&
          (!m.ephemeralTo || m.ephemeralTo === FAKE_USER_ID) &&
          findElement(m.blocks ?? [], actionId),
      );
    if (!message)
      return refusedTrigger(
        `No message in workspace ${team.id} has an element with action_id ${JSON.stringify(actionId)}: Slack sends block actions only for elements a message shows.`,
      );
    const { element, blockId } = findElement(message.blocks ?? [], actionId)!;
    const value = typeof params.value === "string" ? params.value : undefined;
    const actionTs = `${Math.floor(now() / 1000)}.${String(++seq).padStart(6, "0")}`;
    let action: Record<string, unknown>;
    if (element.type === "button") {
      if (value !== undefined && value !== element.value)
        return refusedTrigger("A button sends its own value: --value is for a select.");
      action = {
        type: "button",
        action_id: actionId,
        block_id: blockId,
        text: element.text,
        ...(element.value !== undefined ? { value: element.value } : {}),
        ...(element.style !== undefined ? { style: element.style } : {}),
        action_ts: actionTs,
      };
    } else if (element.type === "static_select") {
      const option = value === undefined ? null : optionWithValue(element, value);
      if (!option)
        return refusedTrigger(
          `Choose one of this select's options with --value (got ${JSON.stringify(value ?? null)}).`,
        );
      action = {
        type: "static_select",
        action_id: actionId,
        block_id: blockId,
        selected_option: option,
        action_ts: actionTs,
      };
    } else {
      return refusedTrigger(
        `The element ${JSON.stringify(actionId)} is a ${String(element.type)}: the fake clicks buttons and chooses in static selects.`,
      );
    }
    return {
      type: "block_actions",
      user: userPayload(team),
      api_app_id: apiAppId,
      token: "fake-verification-token",
      container: {
        type: "message",
        message_ts: message.ts,
        channel_id: message.channel,
        is_ephemeral: Boolean(message.ephemeralTo),
      },
      trigger_id: issueTrigger(team.id),
      team: { id: team.id, domain: team.id.toLowerCase() },
      enterprise: null,
      is_enterprise_install: false,
      channel: { id: message.channel, name: FAKE_CHANNEL_NAMES[message.channel] ?? message.channel },
      message: {
        type: "message",
        user: message.user,
        ts: message.ts,
        text: message.text,
        ...(message.blocks ? { blocks: message.blocks } : {}),
      },
      state: { values: {} },
      response_url: responseUrls.issue(origin, { teamId: team.id, channel: message.channel, messageTs: message.ts }),
      actions: [action],
    };
  }

  /** A submit of a view the bot opened (`view_submission`), with what the user entered by action_id. */
  function viewSubmission(
    team: TeamInfo,
    params: Record<string, unknown>,
  ): { view: OpenView; payload: Record<string, unknown> } | Response {
    const callbackId = typeof params.callbackId === "string" ? params.callbackId : "";
    if (!callbackId) return refusedTrigger("a view submit needs callbackId");
    const view = [...views.values()].reverse().find((v) => v.teamId === team.id && v.callbackId === callbackId);
    if (!view)
      return refusedTrigger(
        `No view with callback_id ${JSON.stringify(callbackId)} is open in workspace ${team.id}: Slack sends a submission only for a view the app opened.`,
      );
    const given = params.fields && typeof params.fields === "object" ? (params.fields as Record<string, unknown>) : {};
    const inputs = view.blocks.filter((b) => b.type === "input");
    const ids = inputs.map((b) => String((b.element as Record<string, unknown>).action_id));
    const unknown = Object.keys(given).filter((k) => !ids.includes(k));
    if (unknown.length)
      return refusedTrigger(`The view has no input ${unknown.join(", ")} (its inputs: ${ids.join(", ")}).`);
    const values: Record<string, Record<string, unknown>> = {};
    for (const block of inputs) {
      const element = block.element as Record<string, unknown>;
      const id = String(element.action_id);
      const value = given[id] === undefined ? "" : String(given[id]);
      if (!value && block.optional !== true) return refusedTrigger(`The input ${id} is required.`);
      let state: Record<string, unknown>;
      if (element.type === "static_select") {
        const option = value ? optionWithValue(element, value) : null;
        if (value && !option) return refusedTrigger(`${JSON.stringify(value)} is not an option of ${id}.`);
        state = { type: "static_select", selected_option: option };
      } else {
        const max = typeof element.max_length === "number" ? element.max_length : 3000;
        if (value.length > max) return refusedTrigger(`The input ${id} takes at most ${max} characters.`);
        state = { type: String(element.type), value: value || null };
      }
      values[String(block.block_id)] = { ...values[String(block.block_id)], [id]: state };
    }
    return {
      view,
      payload: {
        type: "view_submission",
        team: { id: team.id, domain: team.id.toLowerCase() },
        user: userPayload(team),
        api_app_id: apiAppId,
        token: "fake-verification-token",
        trigger_id: issueTrigger(team.id),
        view: { ...viewPayload(view), state: { values } },
        response_urls: [],
        is_enterprise_install: false,
        enterprise: null,
      },
    };
  }

  /**
   * What the app's 200 to a view_submission does to the view: none or "clear" closes it, "errors" keeps it open,
   * "update" replaces it with the answer's `view` (refused as views.open refuses one: the view stays as it was).
   * Answers what became of it.
   */
  function answerToSubmission(view: OpenView, body: string): Record<string, unknown> {
    let answer: { response_action?: unknown; view?: unknown } = {};
    try {
      answer = body ? JSON.parse(body) : {};
    } catch {
      return { open: true, refused: "The answer is not JSON: Slack shows the user an error." };
    }
    const action = answer.response_action;
    if (action === undefined || action === "clear") {
      views.delete(view.id);
      return { open: false };
    }
    if (action !== "update") return { open: true };
    const refusal = viewRefusal(answer.view);
    if (refusal) return { open: true, refused: refusal.messages.join(" ") };
    const next = answer.view as Record<string, unknown>;
    const updated: OpenView = {
      ...view,
      callbackId: typeof next.callback_id === "string" ? next.callback_id : "",
      privateMetadata: typeof next.private_metadata === "string" ? next.private_metadata : "",
      title: next.title as Record<string, unknown>,
      blocks: withGeneratedIds(next.blocks as unknown[]),
      hash: `${Math.floor(now() / 1000)}.${randomHex(4)}`,
    };
    if (next.submit) updated.submit = next.submit as Record<string, unknown>;
    else delete updated.submit;
    views.set(view.id, updated);
    return { open: true, updated: viewPayload(updated) };
  }

  /**
   * A POST to a click's response_url: a JSON message that is sent (ephemeral to the clicker unless
   * `response_type` is in_channel), replaces the clicked message (`replace_original`) or deletes it
   * (`delete_original`). Slack answers `{ ok: true }`, or 404 for a URL that expired or was used 5 times.
   */
  async function respondToClick(request: Request, path: string): Promise<Response> {
    let params: Record<string, unknown>;
    try {
      const value = JSON.parse(await request.text());
      if (!value || typeof value !== "object" || Array.isArray(value)) throw new Error("not an object");
      params = value;
    } catch {
      return apiJson({ ok: false, error: "invalid_payload" }, 400);
    }
    const target = responseUrls.use(path);
    if ("error" in target) return apiJson({ ok: false, error: target.error }, 404);
    const key = `${target.teamId}/${target.channel}/${target.messageTs}`;
    const original = messages.get(key);
    if (params.delete_original === true) {
      if (!original) return apiJson({ ok: false, error: "message_not_found" }, 404);
      messages.delete(key);
      return apiJson({ ok: true });
    }
    const body = messageBody(params);
    if (refused(body)) return apiJson(refusalBody(body), 400);
    if (params.replace_original === true) {
      if (!original) return apiJson({ ok: false, error: "message_not_found" }, 404);
      original.text = body.text;
      original.edited = true;
      if (body.blocks) original.blocks = body.blocks;
      else delete original.blocks;
      return apiJson({ ok: true });
    }
    const team = teamInfo(target.teamId);
    const ts = nextTs();
    messages.set(`${team.id}/${target.channel}/${ts}`, {
      channel: target.channel,
      ts,
      text: body.text,
      ...(body.blocks ? { blocks: body.blocks } : {}),
      user: team.botUserId,
      teamId: team.id,
      reactions: new Set(),
      ...(params.response_type === "in_channel" ? {} : { ephemeralTo: FAKE_USER_ID }),
    });
    return apiJson({ ok: true });
  }

  /** Signs and delivers an interactivity payload as Slack does: a form body `payload=<JSON>`. */
  async function deliverInteractivity(payload: Record<string, unknown>) {
    const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    return deliver(body, 0, "application/x-www-form-urlencoded");
  }

  async function trigger(request: Request): Promise<Response> {
    const params = (await readParams(request)) ?? {};
    const kind = String(params.kind ?? "");
    const retry = params.retry === true ? 1 : typeof params.retry === "number" ? params.retry : 0;
    if (retry > 0) {
      if (!lastDelivery)
        return Response.json({ error: "Nothing was delivered yet, so there is nothing to retry." }, { status: 400 });
      lastDelivery.retries = retry;
      const delivered = await deliver(JSON.stringify(lastDelivery.envelope), retry);
      return Response.json({ delivered: lastDelivery.envelope, retryNum: retry, response: delivered });
    }
    const teamId = params.teamId ?? params.resourceId;
    const team = teamInfo(typeof teamId === "string" && teamId ? teamId : DEFAULT_TEAM.id);
    const channel = typeof params.channel === "string" ? params.channel : FAKE_CHANNELS[0];
    const text = typeof params.text === "string" ? params.text : "hello";
    if (kind === "action") {
      const payload = blockActions(team, params, config.baseUrl ?? new URL(request.url).origin);
      if (payload instanceof Response) return payload;
      return Response.json({ delivered: payload, response: await deliverInteractivity(payload) });
    }
    if (kind === "view") {
      const submit = viewSubmission(team, params);
      if (submit instanceof Response) return submit;
      const response = await deliverInteractivity(submit.payload);
      const view = response.status === 200 ? answerToSubmission(submit.view, response.body) : null;
      return Response.json({ delivered: submit.payload, response, ...(view ? { view } : {}) });
    }
    if (kind === "url_verification") {
      const body = { token: "fake-verification-token", challenge: randomHex(24), type: "url_verification" };
      const delivered = await deliver(JSON.stringify(body), 0);
      return Response.json({ delivered: body, response: delivered });
    }
    const event = buildEvent(kind, team, text, channel);
    if (!event) {
      return Response.json(
        {
          error: `Unknown kind ${JSON.stringify(kind)}: use message, mention, reaction, action, view, url_verification, app_uninstalled or tokens_revoked.`,
        },
        { status: 400 },
      );
    }
    if (kind === "app_uninstalled" || kind === "tokens_revoked") revokeTeam(team.id);
    const envelope: Record<string, unknown> = {
      token: "fake-verification-token",
      team_id: team.id,
      api_app_id: apiAppId,
      event,
      type: "event_callback",
      event_id: `Ev${randomHex(5).toUpperCase()}`,
      event_time: Math.floor(now() / 1000),
      authorizations: [
        { enterprise_id: null, team_id: team.id, user_id: team.botUserId, is_bot: true, is_enterprise_install: false },
      ],
      is_ext_shared_channel: false,
    };
    lastDelivery = { envelope, retries: 0 };
    const delivered = await deliver(JSON.stringify(envelope), 0);
    return Response.json({ delivered: envelope, response: delivered });
  }

  async function fetchHandler(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const path = url.pathname;
    if (path === "/oauth/v2/authorize" && request.method === "GET") return authorizePage(url);
    if (path === "/oauth/v2/authorize" && request.method === "POST") return authorizeDecision(request);
    const api = /^\/api\/([a-zA-Z0-9_.]+)$/.exec(path);
    if (api && request.method === "POST") {
      if (api[1] === "oauth.v2.access") return oauthAccess(request);
      return webApi(api[1]!, request);
    }
    if (path === "/__fake/trigger" && request.method === "POST") return trigger(request);
    if (path.startsWith(RESPONSE_URL_PATH) && request.method === "POST") return respondToClick(request, path);
    if (path === "/__fake/recorded" && request.method === "GET") return Response.json({ calls: recorded });
    if (path === "/__fake/chat" && request.method === "GET") {
      const teamId = url.searchParams.get("resourceId") ?? url.searchParams.get("teamId") ?? DEFAULT_TEAM.id;
      const channels = FAKE_CHANNELS.map((id) => ({ id, name: FAKE_CHANNEL_NAMES[id] ?? id }));
      const view: ChatView = workspaceView({
        teamId,
        user: { id: FAKE_USER_ID, name: FAKE_USER_NAME },
        channels,
        messages: [...messages.values()],
        views: [...views.values()],
      });
      return Response.json(view);
    }
    if (path === "/__fake/token-rotation" && request.method === "POST") {
      // The app's token rotation setting: installs after this get expiring tokens (or not).
      const params = (await readParams(request)) ?? {};
      rotation = {
        enabled: params.enabled !== false,
        expiresIn: typeof params.expiresIn === "number" && params.expiresIn > 0 ? params.expiresIn : rotation.expiresIn,
      };
      return Response.json({ ok: true, rotation });
    }
    if (path === "/__fake/refuse-refresh" && request.method === "POST") {
      // The next refresh grants fail with `error` (a refresh token spent elsewhere, an app whose rotation broke).
      const params = (await readParams(request)) ?? {};
      refreshRefusal = {
        error: typeof params.error === "string" ? params.error : "invalid_refresh_token",
        count: typeof params.count === "number" ? params.count : 1,
      };
      return Response.json({ ok: true, refreshRefusal });
    }
    if (path === "/__fake/ratelimit" && request.method === "POST") {
      const params = (await readParams(request)) ?? {};
      rateLimit = {
        method: typeof params.method === "string" ? params.method : null,
        retryAfter: typeof params.retryAfter === "number" ? params.retryAfter : 30,
        count: typeof params.count === "number" ? params.count : 1,
      };
      return Response.json({ ok: true, rateLimit });
    }
    if (path === "/__fake/revoke" && request.method === "POST") {
      const params = (await readParams(request)) ?? {};
      revokeTeam(String(params.teamId ?? DEFAULT_TEAM.id));
      return Response.json({ ok: true });
    }
    if (path === "/__fake/expire" && request.method === "POST") {
      // Slack-side expiry of a team's current access tokens (clock skew, early rotation).
      const params = (await readParams(request)) ?? {};
      const teamId = String(params.teamId ?? DEFAULT_TEAM.id);
      for (const token of tokens.values())
        if (token.teamId === teamId && token.expiresAt !== null) token.expiresAt = now() - 1;
      return Response.json({ ok: true });
    }
    if (path === "/__fake/reset" && request.method === "POST") {
      codes.clear();
      tokens.clear();
      refreshTokens.clear();
      messages.clear();
      triggers.clear();
      views.clear();
      responseUrls.reset();
      recorded.length = 0;
      rateLimit = null;
      refreshRefusal = null;
      lastDelivery = null;
      return Response.json({ ok: true });
    }
    return new Response("Not found", { status: 404 });
  }

  return { fetch: fetchHandler, recorded };
}

export type FakeWorkspace = ReturnType<typeof createFakeWorkspace>;
