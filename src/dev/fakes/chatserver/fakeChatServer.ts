/**
 * A local fake of the chat server (Discord's wire protocol, the subset the
 * chat-server plugin uses), for `platform dev` and tests. It checks what it
 * receives: client credentials, single-use codes bound to their redirect URI,
 * the bot token, known guilds/channels/interactions, JSON bodies, command
 * shapes; and answers with Discord's status codes and JSON error codes.
 *
 * Routes (paths as on discord.com):
 *   GET  /oauth2/authorize              consent page (guild picker, Approve / Cancel)
 *   POST /oauth2/authorize              the consent form's answer → redirect to redirect_uri
 *   POST /api/oauth2/token              authorization_code / refresh_token (form only; basic or post client auth)
 *   PUT  /api/v10/applications/{app}/guilds/{guild}/commands     bulk overwrite (Bot auth)
 *   GET  /api/v10/applications/{app}/guilds/{guild}/commands     (Bot auth)
 *   POST /api/v10/interactions/{id}/{token}/callback
 *   PATCH /api/v10/webhooks/{app}/{token}/messages/@original
 *   POST /api/v10/webhooks/{app}/{token}                        followup
 *   GET  /api/v10/channels/{channel}                            (Bot auth)
 *   POST /api/v10/channels/{channel}/messages                   (Bot auth)
 *   PATCH /api/v10/channels/{channel}/messages/{message}        (Bot auth)
 *   GET  /api/v10/gateway/bot                                   (Bot auth) { url, shards: 1, session_start_limit }
 *   GET  /gateway?v=10&encoding=json  (Upgrade: websocket)      the Gateway (fakeGateway.ts)
 * Test switches (not Discord):
 *   POST /__fake/trigger   { kind: "command"|"message"|"reaction", guildId, name?, text?, channelId?, deliveries? }
 *                          (`resourceId` names the guild as well: the test-event route's neutral field)
 *                          a command: signs an interaction with the fake's Ed25519 key, POSTs it to the plugin's
 *                          webhook URL and returns what it answered; a message / reaction: publishes
 *                          MESSAGE_CREATE / MESSAGE_REACTION_ADD on the Gateway (the only way the real one
 *                          delivers them) and returns { payload, delivered: "gateway", sessions, live }
 *   POST /__fake/gateway/drop | reconnect | invalid-session { resumable? } | withhold-acks   (fakeGateway.ts)
 *   GET  /__fake/gateway   sessions, live connections, identifies, what the Gateway saw
 *   POST /__fake/rate-limit { count, retryAfter? }  the next `count` REST calls answer 429 with Retry-After
 *   GET  /__fake/recorded  every API call received: { method, path, auth, body, status }
 *   GET  /__fake/state     guilds, installs, commands, messages
 *   POST /__fake/reset     forget everything but the configuration
 */
import { signEd25519 } from "../../../core/crypto/ed25519.ts";
import { randomHex } from "../../../core/crypto/encoding.ts";
import { formDecode } from "../../../core/web/basicAuthorization.ts";
import { escapeHtml } from "../../../core/web/html.ts";
import { createFakeGateway } from "./fakeGateway.ts";

export interface FakeGuild {
  id: string;
  name: string;
  /** Channel ids of the guild (default: one, `<guild id with 2s>`-style ids below). */
  channels: string[];
}

export const TEST_GUILD: FakeGuild = {
  id: "111111111111111111",
  name: "Test Server",
  channels: ["222222222222222222"],
};
export const OTHER_GUILD: FakeGuild = {
  id: "333333333333333333",
  name: "Other Server",
  channels: ["444444444444444444"],
};
export const TEST_USER = { id: "555555555555555555", username: "tester", global_name: "Test User" };

export interface FakeChatServerConfig {
  /** Where the fake itself is reachable, e.g. `http://127.0.0.1:8790` (used in nothing it signs; informational). */
  baseUrl: string;
  applicationId: string;
  clientId: string;
  clientSecret: string;
  botToken: string;
  /** Ed25519 seed (hex, 32 bytes) the fake signs webhooks with; the plugin holds the matching public key. */
  signingSeed: string;
  /** The plugin's `POST /webhook` URL. */
  webhookUrl: string;
  /** Redirect URIs registered for the client; empty = any http(s) URI. */
  redirectUris?: string[];
  guilds?: FakeGuild[];
  /** The Gateway's HELLO heartbeat_interval (default 41250 ms, as Discord's; tests shorten it). */
  gatewayHeartbeatMs?: number;
  /** How the fake reaches the plugin (default: global fetch). */
  deliver?: (request: Request) => Promise<Response>;
  now?: () => number;
}

export interface RecordedCall {
  method: string;
  path: string;
  auth: string | null;
  body: unknown;
  status: number;
}

interface IssuedCode {
  clientId: string;
  redirectUri: string;
  guildId: string;
  scope: string;
  permissions: string;
  expiresAt: number;
}

interface Interaction {
  id: string;
  token: string;
  guildId: string;
  channelId: string;
  createdAt: number;
  acknowledged: boolean;
  responses: unknown[];
}

interface Message {
  id: string;
  channel_id: string;
  content: string;
  author: { id: string; username: string; bot?: boolean };
  edited_timestamp: string | null;
  webhook_id?: string;
}

// The provider's own rule for command names (wider than the platform's contracts/chatServerEvents.ts COMMAND_NAME).
const COMMAND_NAME = /^[-_'\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$/u;
const INTERACTION_TOKEN_TTL_MS = 15 * 60 * 1000;
const CODE_TTL_MS = 10 * 60 * 1000;

let snowflakeCounter = 0;
function snowflake(): string {
  // Discord ids are decimal 64-bit integers: time-based plus a counter.
  return String((BigInt(Date.now() - 1420070400000) << 22n) + BigInt(++snowflakeCounter % 4096));
}

/** Discord's JSON error body. */
function discordError(status: number, code: number, message: string, extra: Record<string, unknown> = {}): Response {
  return Response.json({ message, code, ...extra }, { status });
}

function oauthError(status: number, error: string, description: string): Response {
  return Response.json({ error, error_description: description }, { status });
}

export function createFakeChatServer(config: FakeChatServerConfig) {
  const guilds = config.guilds ?? [TEST_GUILD, OTHER_GUILD];
  const now = config.now ?? Date.now;
  const deliver = config.deliver ?? ((request: Request) => fetch(request));
  const gateway = createFakeGateway({
    baseUrl: config.baseUrl,
    botToken: config.botToken,
    applicationId: config.applicationId,
    ...(config.gatewayHeartbeatMs ? { heartbeatIntervalMs: config.gatewayHeartbeatMs } : {}),
  });

  let codes = new Map<string, IssuedCode>();
  let accessTokens = new Map<string, { guildId: string; refreshToken: string }>();
  let installedGuilds = new Set<string>();
  let commands = new Map<string, unknown[]>();
  let interactions = new Map<string, Interaction>();
  let messages = new Map<string, Message>();
  let recorded: RecordedCall[] = [];
  let rateLimit = { remaining: 0, retryAfter: 1 };

  function reset() {
    codes = new Map();
    accessTokens = new Map();
    installedGuilds = new Set();
    commands = new Map();
    interactions = new Map();
    messages = new Map();
    recorded = [];
    rateLimit = { remaining: 0, retryAfter: 1 };
    gateway.reset();
  }

  const guildById = (id: string) => guilds.find((g) => g.id === id);
  const guildOfChannel = (channelId: string) => guilds.find((g) => g.channels.includes(channelId));

  function redirectAllowed(uri: string): boolean {
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      return false;
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") return false;
    return !config.redirectUris?.length || config.redirectUris.includes(uri);
  }

  // ------------------------------------------------------------------ OAuth2

  function authorizePage(url: URL): Response {
    const q = url.searchParams;
    const clientId = q.get("client_id") ?? "";
    const redirectUri = q.get("redirect_uri") ?? "";
    const scope = q.get("scope") ?? "";
    if (clientId !== config.clientId)
      return page(400, "Unknown application", "client_id does not name a registered application.");
    if (q.get("response_type") !== "code") return page(400, "Invalid request", "response_type must be code.");
    if (!redirectAllowed(redirectUri))
      return page(400, "Invalid redirect_uri", "redirect_uri is not registered for this application.");
    const scopes = scope.split(" ");
    if (!scopes.includes("bot") || !scopes.includes("applications.commands")) {
      return page(400, "Invalid scope", "scope must include bot and applications.commands.");
    }
    const preselected = q.get("guild_id");
    const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;
    const options = guilds
      .map(
        (g) =>
          `<option value="${g.id}"${g.id === preselected ? " selected" : ""}>${escapeHtml(g.name)} (${g.id})</option>`,
      )
      .join("");
    const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Authorize application</title></head>
<body><h1>An external application wants to access your account</h1>
<p>It will be added to the server you choose, with permission to create commands.</p>
<form method="post" action="/oauth2/authorize">
${hidden("client_id", clientId)}${hidden("redirect_uri", redirectUri)}${hidden("state", q.get("state") ?? "")}${hidden("scope", scope)}${hidden("permissions", q.get("permissions") ?? "0")}
<label>Add to server <select name="guild_id">${options}</select></label>
<button type="submit" name="action" value="cancel">Cancel</button>
<button type="submit" name="action" value="approve">Authorize</button>
</form></body></html>`;
    return new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } });
  }

  function page(status: number, title: string, message: string): Response {
    return new Response(
      `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></body></html>`,
      {
        status,
        headers: { "content-type": "text/html; charset=utf-8" },
      },
    );
  }

  async function authorizeAnswer(request: Request): Promise<Response> {
    const form = await request.formData();
    const field = (name: string) => String(form.get(name) ?? "");
    const redirectUri = field("redirect_uri");
    if (field("client_id") !== config.clientId || !redirectAllowed(redirectUri)) {
      return page(400, "Invalid request", "The form does not name a registered application and redirect_uri.");
    }
    const target = new URL(redirectUri);
    const state = field("state");
    if (field("action") !== "approve") {
      target.searchParams.set("error", "access_denied");
      target.searchParams.set("error_description", "The resource owner or authorization server denied the request");
      if (state) target.searchParams.set("state", state);
      return Response.redirect(target.toString(), 302);
    }
    const guild = guildById(field("guild_id"));
    if (!guild) return page(400, "Unknown server", "Choose one of the listed servers.");
    const code = randomHex(16);
    codes.set(code, {
      clientId: config.clientId,
      redirectUri,
      guildId: guild.id,
      scope: field("scope"),
      permissions: field("permissions") || "0",
      expiresAt: now() + CODE_TTL_MS,
    });
    installedGuilds.add(guild.id);
    target.searchParams.set("code", code);
    if (state) target.searchParams.set("state", state);
    target.searchParams.set("guild_id", guild.id);
    target.searchParams.set("permissions", field("permissions") || "0");
    return Response.redirect(target.toString(), 302);
  }

  async function token(request: Request): Promise<Response> {
    const type = request.headers.get("content-type") ?? "";
    if (!type.startsWith("application/x-www-form-urlencoded")) {
      return oauthError(400, "invalid_request", "The token endpoint accepts only application/x-www-form-urlencoded.");
    }
    const form = new URLSearchParams(new TextDecoder().decode(await request.arrayBuffer()));
    let clientId = form.get("client_id");
    let clientSecret = form.get("client_secret");
    const basic = request.headers.get("authorization");
    if (basic?.startsWith("Basic ")) {
      if (clientSecret) return oauthError(400, "invalid_request", "Use one client authentication method, not two.");
      const decoded = atob(basic.slice(6));
      const i = decoded.indexOf(":");
      clientId = formDecode(decoded.slice(0, i));
      clientSecret = formDecode(decoded.slice(i + 1));
    }
    if (clientId !== config.clientId || clientSecret !== config.clientSecret) {
      return oauthError(401, "invalid_client", "Client authentication failed.");
    }
    const grant = form.get("grant_type");
    if (grant === "authorization_code") {
      const code = form.get("code") ?? "";
      const issued = codes.get(code);
      codes.delete(code); // single use, even when the rest of the request is wrong
      if (!issued || issued.expiresAt < now()) return oauthError(400, "invalid_grant", 'Invalid "code" in request.');
      if (form.get("redirect_uri") !== issued.redirectUri) {
        return oauthError(400, "invalid_grant", 'Invalid "redirect_uri" in request.');
      }
      const guild = guildById(issued.guildId)!;
      const accessToken = randomHex(15);
      const refreshToken = randomHex(15);
      accessTokens.set(accessToken, { guildId: guild.id, refreshToken });
      return Response.json({
        access_token: accessToken,
        token_type: "Bearer",
        expires_in: 604800,
        refresh_token: refreshToken,
        scope: issued.scope,
        guild: { id: guild.id, name: guild.name, owner_id: TEST_USER.id, icon: null },
      });
    }
    if (grant === "refresh_token") {
      const refresh = form.get("refresh_token");
      const entry = [...accessTokens.entries()].find(([, v]) => v.refreshToken === refresh);
      if (!entry) return oauthError(400, "invalid_grant", 'Invalid "refresh_token" in request.');
      accessTokens.delete(entry[0]);
      const accessToken = randomHex(15);
      const refreshToken = randomHex(15);
      accessTokens.set(accessToken, { guildId: entry[1].guildId, refreshToken });
      return Response.json({
        access_token: accessToken,
        token_type: "Bearer",
        expires_in: 604800,
        refresh_token: refreshToken,
        scope: "bot applications.commands",
      });
    }
    return oauthError(400, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token.");
  }

  // ------------------------------------------------------------------ REST

  function botAuthorized(request: Request): boolean {
    return request.headers.get("authorization") === `Bot ${config.botToken}`;
  }

  async function jsonBody(request: Request): Promise<{ ok: true; value: unknown } | { ok: false; response: Response }> {
    if (!(request.headers.get("content-type") ?? "").startsWith("application/json")) {
      return {
        ok: false,
        response: discordError(400, 50035, "Invalid Form Body", {
          errors: { _errors: [{ code: "CONTENT_TYPE_INVALID", message: "Expected application/json" }] },
        }),
      };
    }
    try {
      return { ok: true, value: JSON.parse(await request.text()) };
    } catch {
      return { ok: false, response: discordError(400, 50109, "The request body contains invalid JSON.") };
    }
  }

  function messageContent(body: unknown): string | Response {
    const content = (body as { content?: unknown } | null)?.content;
    if (typeof content !== "string" || content.length === 0) {
      return discordError(400, 50006, "Cannot send an empty message");
    }
    if (content.length > 2000) {
      return discordError(400, 50035, "Invalid Form Body", {
        errors: {
          content: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: "Must be 2000 or fewer in length." }] },
        },
      });
    }
    return content;
  }

  function validateCommands(body: unknown): string | null {
    if (!Array.isArray(body)) return "body must be an array of commands";
    if (body.length > 100) return "at most 100 commands";
    const names = new Set<string>();
    for (const [i, c] of body.entries()) {
      if (!c || typeof c !== "object") return `${i}: must be an object`;
      const cmd = c as { name?: unknown; description?: unknown; type?: unknown };
      const type = cmd.type ?? 1;
      if (
        typeof cmd.name !== "string" ||
        !COMMAND_NAME.test(cmd.name) ||
        (type === 1 && cmd.name !== cmd.name.toLowerCase())
      ) {
        return `${i}.name: invalid command name`;
      }
      if (
        type === 1 &&
        (typeof cmd.description !== "string" || cmd.description.length < 1 || cmd.description.length > 100)
      ) {
        return `${i}.description: must be between 1 and 100 in length`;
      }
      if (names.has(cmd.name)) return `${i}.name: duplicate command name`;
      names.add(cmd.name);
    }
    return null;
  }

  function liveInteraction(token: string): Interaction | null {
    const interaction = [...interactions.values()].find((i) => i.token === token);
    if (!interaction || now() - interaction.createdAt > INTERACTION_TOKEN_TTL_MS) return null;
    return interaction;
  }

  async function rest(request: Request, path: string): Promise<Response> {
    if (rateLimit.remaining > 0) {
      rateLimit.remaining--;
      return Response.json(
        { message: "You are being rate limited.", retry_after: rateLimit.retryAfter, global: false },
        {
          status: 429,
          headers: {
            "Retry-After": String(Math.ceil(rateLimit.retryAfter)),
            "X-RateLimit-Limit": "5",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset-After": String(rateLimit.retryAfter),
            "X-RateLimit-Scope": "user",
          },
        },
      );
    }
    const seg = path.split("/").filter(Boolean); // after /api/v10
    const method = request.method;

    // Application commands of one guild.
    if (seg[0] === "applications" && seg[2] === "guilds" && seg[4] === "commands" && seg.length === 5) {
      if (!botAuthorized(request)) return discordError(401, 0, "401: Unauthorized");
      if (seg[1] !== config.applicationId) return discordError(403, 50001, "Missing Access");
      const guild = guildById(seg[3]!);
      if (!guild) return discordError(404, 10004, "Unknown Guild");
      if (!installedGuilds.has(guild.id)) return discordError(403, 50001, "Missing Access");
      if (method === "GET") return Response.json(commands.get(guild.id) ?? []);
      if (method !== "PUT") return discordError(405, 0, "405: Method Not Allowed");
      const body = await jsonBody(request);
      if (!body.ok) return body.response;
      const problem = validateCommands(body.value);
      if (problem)
        return discordError(400, 50035, "Invalid Form Body", {
          errors: { _errors: [{ code: "INVALID", message: problem }] },
        });
      const stored = (body.value as Record<string, unknown>[]).map((c) => ({
        id: snowflake(),
        application_id: config.applicationId,
        guild_id: guild.id,
        version: snowflake(),
        type: 1,
        ...c,
      }));
      commands.set(guild.id, stored);
      return Response.json(stored);
    }

    // Interaction callback (no auth: the token is in the path).
    if (seg[0] === "interactions" && seg[3] === "callback" && seg.length === 4 && method === "POST") {
      const interaction = interactions.get(seg[1]!);
      if (!interaction || interaction.token !== seg[2] || now() - interaction.createdAt > INTERACTION_TOKEN_TTL_MS) {
        return discordError(404, 10062, "Unknown interaction");
      }
      if (interaction.acknowledged) return discordError(400, 40060, "Interaction has already been acknowledged.");
      const body = await jsonBody(request);
      if (!body.ok) return body.response;
      const type = (body.value as { type?: unknown })?.type;
      if (![4, 5].includes(type as number)) return discordError(400, 50035, "Invalid Form Body");
      if (type === 4) {
        const content = messageContent((body.value as { data?: unknown }).data);
        if (content instanceof Response) return content;
        storeMessage(interaction.channelId, content, config.applicationId);
      }
      interaction.acknowledged = true;
      interaction.responses.push(body.value);
      return new Response(null, { status: 204 });
    }

    // Interaction webhooks: edit original, followups.
    if (seg[0] === "webhooks" && seg.length >= 3) {
      if (seg[1] !== config.applicationId) return discordError(404, 10015, "Unknown Webhook");
      const interaction = liveInteraction(seg[2]!);
      if (!interaction) return discordError(401, 50027, "Invalid Webhook Token");
      const body = await jsonBody(request);
      if (!body.ok) return body.response;
      const content = messageContent(body.value);
      if (content instanceof Response) return content;
      if (seg.length === 5 && seg[3] === "messages" && seg[4] === "@original" && method === "PATCH") {
        if (!interaction.acknowledged) return discordError(404, 10008, "Unknown Message");
        const message = storeMessage(
          interaction.channelId,
          content,
          config.applicationId,
          `original:${interaction.id}`,
        );
        interaction.responses.push({ edit: body.value });
        return Response.json(message);
      }
      if (seg.length === 3 && method === "POST") {
        if (!interaction.acknowledged) return discordError(404, 10062, "Unknown interaction");
        const message = storeMessage(interaction.channelId, content, config.applicationId);
        interaction.responses.push({ followup: body.value });
        return Response.json(message);
      }
      return discordError(405, 0, "405: Method Not Allowed");
    }

    // One channel (Bot auth): which guild it is in.
    if (seg[0] === "channels" && seg.length === 2 && method === "GET") {
      if (!botAuthorized(request)) return discordError(401, 0, "401: Unauthorized");
      const guild = guildOfChannel(seg[1]!);
      if (!guild) return discordError(404, 10003, "Unknown Channel");
      if (!installedGuilds.has(guild.id)) return discordError(403, 50001, "Missing Access");
      return Response.json({ id: seg[1], type: 0, guild_id: guild.id, name: "general" });
    }

    // Where the Gateway is (Bot auth).
    if (seg[0] === "gateway" && seg[1] === "bot" && seg.length === 2 && method === "GET") {
      if (!botAuthorized(request)) return discordError(401, 0, "401: Unauthorized");
      return Response.json(gateway.gatewayBot());
    }

    // Channel messages (Bot auth).
    if (seg[0] === "channels" && seg[2] === "messages" && (seg.length === 3 || seg.length === 4)) {
      if (!botAuthorized(request)) return discordError(401, 0, "401: Unauthorized");
      const guild = guildOfChannel(seg[1]!);
      if (!guild) return discordError(404, 10003, "Unknown Channel");
      if (!installedGuilds.has(guild.id)) return discordError(403, 50001, "Missing Access");
      const body = await jsonBody(request);
      if (!body.ok) return body.response;
      const content = messageContent(body.value);
      if (content instanceof Response) return content;
      if (seg.length === 3 && method === "POST") return Response.json(storeMessage(seg[1]!, content));
      if (seg.length === 4 && method === "PATCH") {
        const existing = messages.get(seg[3]!);
        if (!existing || existing.channel_id !== seg[1]) return discordError(404, 10008, "Unknown Message");
        if (!existing.author.bot) return discordError(403, 50005, "Cannot edit a message authored by another user");
        existing.content = content;
        existing.edited_timestamp = new Date(now()).toISOString();
        return Response.json(existing);
      }
      return discordError(405, 0, "405: Method Not Allowed");
    }

    return discordError(404, 0, "404: Not Found");
  }

  function storeMessage(channelId: string, content: string, webhookId?: string, key?: string): Message {
    const existing = key ? messages.get(key) : undefined;
    if (existing) {
      existing.content = content;
      existing.edited_timestamp = new Date(now()).toISOString();
      return existing;
    }
    const message: Message = {
      id: snowflake(),
      channel_id: channelId,
      content,
      author: { id: config.applicationId, username: "platform-bot", bot: true },
      edited_timestamp: null,
      ...(webhookId ? { webhook_id: webhookId } : {}),
    };
    messages.set(message.id, message);
    if (key) messages.set(key, message);
    return message;
  }

  // ------------------------------------------------------------------ trigger

  /** A user's message or reaction in a server: a Gateway dispatch, as the real chat server sends it. */
  function publishEvent(kind: "message" | "reaction", guildId: string, channelId: string, text: string) {
    const t = kind === "message" ? "MESSAGE_CREATE" : "MESSAGE_REACTION_ADD";
    const d =
      kind === "message"
        ? {
            id: snowflake(),
            channel_id: channelId,
            guild_id: guildId,
            author: TEST_USER,
            content: text,
            timestamp: new Date(now()).toISOString(),
          }
        : {
            user_id: TEST_USER.id,
            channel_id: channelId,
            message_id: snowflake(),
            guild_id: guildId,
            emoji: { id: null, name: text || "👍" },
          };
    const published = gateway.publish(t, d);
    return { payload: { op: 0, t, d }, delivered: "gateway", sessions: published.sessions, live: published.live };
  }

  async function trigger(request: Request): Promise<Response> {
    let input: {
      kind?: unknown;
      guildId?: unknown;
      resourceId?: unknown;
      name?: unknown;
      text?: unknown;
      channelId?: unknown;
      deliveries?: unknown;
      timestamp?: unknown;
    };
    try {
      input = (await request.json()) as typeof input;
    } catch {
      return Response.json({ error: "body must be JSON" }, { status: 400 });
    }
    const requested = String(input.guildId ?? input.resourceId ?? TEST_GUILD.id);
    const guild = guildById(requested);
    const guildId = guild?.id ?? requested;
    const channelId = typeof input.channelId === "string" ? input.channelId : (guild?.channels[0] ?? "0");
    const text = typeof input.text === "string" ? input.text : "";
    let payload: Record<string, unknown>;
    if (input.kind === "command") {
      if (typeof input.name !== "string" || !input.name)
        return Response.json({ error: "a command needs a name" }, { status: 400 });
      const interaction: Interaction = {
        id: snowflake(),
        token: `aW50ZXJhY3Rpb24${randomHex(24)}`,
        guildId,
        channelId,
        createdAt: now(),
        acknowledged: false,
        responses: [],
      };
      interactions.set(interaction.id, interaction);
      payload = {
        id: interaction.id,
        application_id: config.applicationId,
        type: 2,
        data: {
          id: snowflake(),
          name: input.name,
          type: 1,
          ...(text ? { options: [{ name: "text", type: 3, value: text }] } : {}),
        },
        guild_id: guildId,
        channel_id: channelId,
        member: { user: TEST_USER, roles: [], permissions: "0", nick: null },
        token: interaction.token,
        version: 1,
        app_permissions: "0",
        locale: "en-US",
        guild_locale: "en-US",
      };
    } else if (input.kind === "message" || input.kind === "reaction") {
      return Response.json(publishEvent(input.kind, guildId, channelId, text));
    } else {
      return Response.json({ error: 'kind must be "command", "message" or "reaction"' }, { status: 400 });
    }
    const body = JSON.stringify(payload);
    const timestamp = typeof input.timestamp === "string" ? input.timestamp : String(Math.floor(now() / 1000));
    const signature = await signEd25519(config.signingSeed, timestamp + body);
    const deliveries = Math.min(Math.max(Number(input.deliveries ?? 1) || 1, 1), 5);
    const answers: { status: number; body: unknown }[] = [];
    for (let i = 0; i < deliveries; i++) {
      const response = await deliver(
        new Request(config.webhookUrl, {
          method: "POST",
          body,
          headers: {
            "content-type": "application/json",
            "user-agent": "Discord-Interactions/1.0 (+https://discord.com)",
            "X-Signature-Ed25519": signature,
            "X-Signature-Timestamp": timestamp,
          },
        }),
      );
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        // keep the text
      }
      answers.push({ status: response.status, body: parsed });
      // An inline answer to an interaction acknowledges it, as on Discord (type 4 also posts its message).
      const interaction = input.kind === "command" ? interactions.get(String(payload.id)) : undefined;
      const answerType = (parsed as { type?: unknown } | null)?.type;
      if (
        interaction &&
        !interaction.acknowledged &&
        response.status === 200 &&
        (answerType === 4 || answerType === 5)
      ) {
        interaction.acknowledged = true;
        interaction.responses.push(parsed);
        const content = (parsed as { data?: { content?: unknown } }).data?.content;
        if (answerType === 4 && typeof content === "string")
          storeMessage(interaction.channelId, content, config.applicationId, `original:${interaction.id}`);
      }
    }
    return Response.json({
      payload,
      delivered: answers.length,
      status: answers[0]!.status,
      body: answers[0]!.body,
      answers,
    });
  }

  // ------------------------------------------------------------------ gateway switches

  async function gatewaySwitch(request: Request, path: string): Promise<Response> {
    if (path === "/__fake/gateway" && request.method === "GET") return Response.json(gateway.state());
    if (request.method !== "POST") return new Response("Not found", { status: 404 });
    const switches: Record<string, () => Promise<void> | void> = {
      "/__fake/gateway/drop": gateway.drop,
      "/__fake/gateway/reconnect": gateway.reconnect,
      "/__fake/gateway/withhold-acks": gateway.withholdAcks,
      "/__fake/gateway/invalid-session": async () => {
        const body = (await request.json().catch(() => ({}))) as { resumable?: unknown };
        gateway.invalidSession(body.resumable === true);
      },
    };
    const run = switches[path];
    if (!run) return new Response("Not found", { status: 404 });
    await run();
    return new Response(null, { status: 204 });
  }

  // ------------------------------------------------------------------ entry

  async function handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const path = url.pathname;
    if (path.startsWith("/__fake/")) {
      if (path === "/__fake/trigger" && request.method === "POST") return trigger(request);
      if (path.startsWith("/__fake/gateway")) return gatewaySwitch(request, path);
      if (path === "/__fake/recorded") return Response.json(recorded);
      if (path === "/__fake/reset" && request.method === "POST") {
        reset();
        return new Response(null, { status: 204 });
      }
      if (path === "/__fake/rate-limit" && request.method === "POST") {
        const body = (await request.json().catch(() => ({}))) as { count?: number; retryAfter?: number };
        rateLimit = { remaining: Math.max(0, Number(body.count ?? 1)), retryAfter: Number(body.retryAfter ?? 1) };
        return new Response(null, { status: 204 });
      }
      if (path === "/__fake/state") {
        return Response.json({
          guilds,
          installedGuilds: [...installedGuilds],
          commands: Object.fromEntries(commands),
          messages: [...new Set(messages.values())],
          interactions: [...interactions.values()].map(({ id, guildId, acknowledged, responses }) => ({
            id,
            guildId,
            acknowledged,
            responses,
          })),
        });
      }
      return new Response("Not found", { status: 404 });
    }
    if (path === "/gateway" || path === "/gateway/") return gateway.upgrade(request);
    if (path === "/oauth2/authorize") {
      if (request.method === "GET") return authorizePage(url);
      if (request.method === "POST") return authorizeAnswer(request);
    }
    const clone = request.clone();
    let response: Response;
    if (path === "/api/oauth2/token" || path === "/api/v10/oauth2/token") {
      response = request.method === "POST" ? await token(request) : discordError(405, 0, "405: Method Not Allowed");
    } else if (path.startsWith("/api/v10/")) {
      response = await rest(request, path.slice("/api/v10".length));
    } else {
      response = discordError(404, 0, "404: Not Found");
    }
    const raw = new TextDecoder().decode(await clone.arrayBuffer());
    let body: unknown = raw;
    try {
      body = raw ? JSON.parse(raw) : null;
    } catch {
      // form bodies and non-JSON stay text
    }
    recorded.push({
      method: request.method,
      path,
      auth: request.headers.get("authorization"),
      body,
      status: response.status,
    });
    return response;
  }

  return {
    fetch: handle,
    reset,
    recorded: () => recorded,
    state: () => ({ installedGuilds, commands, messages, interactions }),
    gateway,
  };
}

export type FakeChatServer = ReturnType<typeof createFakeChatServer>;
