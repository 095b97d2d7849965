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
import type { ChatView } from "../chatView.ts";
import { randomHex } from "../../../core/crypto/encoding.ts";
import { createResponseUrls, RESPONSE_URL_PATH } from "./fakeResponseUrls.ts";
import { blockActions } from "./fakeWorkspaceActions.ts";
import { createWorkspaceEvents } from "./fakeWorkspaceEvents.ts";
import { createWorkspaceMessages, MESSAGE_METHODS } from "./fakeWorkspaceMessages.ts";
import { createWorkspaceOAuth } from "./fakeWorkspaceOAuth.ts";
import {
  DEFAULT_TEAM,
  FAKE_CHANNEL_NAMES,
  FAKE_CHANNELS,
  FAKE_USER_ID,
  FAKE_USER_NAME,
  teamInfo,
} from "./fakeWorkspaceTeam.ts";
import { workspaceView } from "./fakeWorkspaceView.ts";
import { createWorkspaceViews } from "./fakeWorkspaceViews.ts";
import { apiJson, readParams } from "./fakeWorkspaceWire.ts";

export { DEFAULT_TEAM, FAKE_CHANNEL_NAMES, FAKE_CHANNELS, FAKE_USER_ID, FAKE_USER_NAME } from "./fakeWorkspaceTeam.ts";

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

export function createFakeWorkspace(config: FakeWorkspaceConfig) {
  const now = config.now ?? (() => Date.now());
  const apiAppId = config.apiAppId ?? "A0PLATFORM";
  const recorded: RecordedCall[] = [];
  let rateLimit: { method: string | null; retryAfter: number; count: number } | null = null;
  const oauth = createWorkspaceOAuth(config, apiAppId, now);
  const messages = createWorkspaceMessages(now);
  const views = createWorkspaceViews(apiAppId, now);
  const responseUrls = createResponseUrls(now);
  const events = createWorkspaceEvents(config, apiAppId, now, messages);

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
    const token = oauth.authenticate(bearer);
    if ("error" in token) return record(200, { ok: false, error: token.error });
    if (method === "auth.revoke") {
      // Slack revokes the token presented (and, for a bot token, removes the bot: its team's tokens die with it).
      oauth.revokeTeam(token.teamId);
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
    if (method === "views.open") return record(200, views.open(params, team.id));
    if (!MESSAGE_METHODS.includes(method)) return record(200, { ok: false, error: "unknown_method" });
    return record(200, messages.call(method, params, team));
  }

  /** A POST to a click's response_url (fakeResponseUrls.ts); Slack answers 404 for a URL that expired or was used 5 times. */
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
    return messages.respond(target, params);
  }

  async function trigger(request: Request): Promise<Response> {
    const params = (await readParams(request)) ?? {};
    const kind = String(params.kind ?? "");
    const retry = params.retry === true ? 1 : typeof params.retry === "number" ? params.retry : 0;
    if (retry > 0) {
      const retried = await events.retry(retry);
      if (!retried)
        return Response.json({ error: "Nothing was delivered yet, so there is nothing to retry." }, { status: 400 });
      return Response.json(retried);
    }
    const teamId = params.teamId ?? params.resourceId;
    const team = teamInfo(typeof teamId === "string" && teamId ? teamId : DEFAULT_TEAM.id);
    const channel = typeof params.channel === "string" ? params.channel : FAKE_CHANNELS[0];
    const text = typeof params.text === "string" ? params.text : "hello";
    if (kind === "action") {
      const origin = config.baseUrl ?? new URL(request.url).origin;
      const payload = blockActions({ apiAppId, messages, views, responseUrls }, team, params, origin);
      if (payload instanceof Response) return payload;
      return Response.json({ delivered: payload, response: await events.interactivity(payload) });
    }
    if (kind === "view") {
      const submit = views.submission(team, params);
      if (submit instanceof Response) return submit;
      const response = await events.interactivity(submit.payload);
      const view = response.status === 200 ? views.answerToSubmission(submit.view, response.body) : null;
      return Response.json({ delivered: submit.payload, response, ...(view ? { view } : {}) });
    }
    if (kind === "url_verification") {
      const body = { token: "fake-verification-token", challenge: randomHex(24), type: "url_verification" };
      const delivered = await events.deliver(JSON.stringify(body));
      return Response.json({ delivered: body, response: delivered });
    }
    const event = events.buildEvent(kind, team, text, channel);
    if (!event) {
      return Response.json(
        {
          error: `Unknown kind ${JSON.stringify(kind)}: use message, mention, reaction, action, view, url_verification, app_uninstalled or tokens_revoked.`,
        },
        { status: 400 },
      );
    }
    if (kind === "app_uninstalled" || kind === "tokens_revoked") oauth.revokeTeam(team.id);
    return Response.json(await events.deliverEvent(team, event));
  }

  async function fetchHandler(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const path = url.pathname;
    if (path === "/oauth/v2/authorize" && request.method === "GET") return oauth.authorizePage(url);
    if (path === "/oauth/v2/authorize" && request.method === "POST") return oauth.authorizeDecision(request);
    const api = /^\/api\/([a-zA-Z0-9_.]+)$/.exec(path);
    if (api && request.method === "POST") {
      if (api[1] === "oauth.v2.access") return oauth.access(request);
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
        messages: messages.all(),
        views: views.all(),
      });
      return Response.json(view);
    }
    if (path === "/__fake/token-rotation" && request.method === "POST") {
      const params = (await readParams(request)) ?? {};
      return Response.json({ ok: true, rotation: oauth.setRotation(params) });
    }
    if (path === "/__fake/refuse-refresh" && request.method === "POST") {
      const params = (await readParams(request)) ?? {};
      return Response.json({ ok: true, refreshRefusal: oauth.refuseRefresh(params) });
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
      oauth.revokeTeam(String(params.teamId ?? DEFAULT_TEAM.id));
      return Response.json({ ok: true });
    }
    if (path === "/__fake/expire" && request.method === "POST") {
      const params = (await readParams(request)) ?? {};
      oauth.expireTeam(String(params.teamId ?? DEFAULT_TEAM.id));
      return Response.json({ ok: true });
    }
    if (path === "/__fake/reset" && request.method === "POST") {
      oauth.reset();
      messages.reset();
      views.reset();
      responseUrls.reset();
      events.reset();
      recorded.length = 0;
      rateLimit = null;
      return Response.json({ ok: true });
    }
    return new Response("Not found", { status: 404 });
  }

  return { fetch: fetchHandler, recorded };
}

export type FakeWorkspace = ReturnType<typeof createFakeWorkspace>;
