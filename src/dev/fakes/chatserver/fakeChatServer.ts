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
 *   PUT | GET | POST  /api/v10/applications/{app}[/guilds/{guild}]/commands   bulk overwrite, list, create one
 *                     (201; 200 when one of that name is overwritten); a guild's or the global ones (Bot auth)
 *   GET | PATCH | DELETE /api/v10/applications/{app}[/guilds/{guild}]/commands/{command}   (Bot auth)
 *   POST /api/v10/interactions/{id}/{token}/callback
 *   GET | PATCH | DELETE /api/v10/webhooks/{app}/{token}/messages/@original   (or %40original)
 *   POST /api/v10/webhooks/{app}/{token}                        followup
 *   GET | PATCH | DELETE /api/v10/webhooks/{app}/{token}/messages/{message}   a followup
 *   GET  /api/v10/channels/{channel}                            (Bot auth)
 *   POST /api/v10/channels/{channel}/messages                   (Bot auth)
 *   GET | PATCH | DELETE /api/v10/channels/{channel}/messages/{message}   (Bot auth)
 * Message bodies are JSON or multipart/form-data (`payload_json` + `files[n]`); a new message needs content,
 * embeds, components, stickers, a poll or a file (else 50006), content <= 2000, embeds <= 10.
 *   GET  /api/v10/gateway/bot                                   (Bot auth) { url, shards: 1, session_start_limit }
 *   GET  /gateway?v=10&encoding=json  (Upgrade: websocket)      the Gateway (fakeGateway.ts)
 * Test switches (not Discord):
 *   POST /__fake/trigger   { kind: "command"|"message"|"reaction", guildId, name?, text?, channelId?, deliveries? }
 *                          (`resourceId` names the guild as well: the test-event route's neutral field)
 *                          a command: signs an interaction with the fake's Ed25519 key, POSTs it to the plugin's
 *                          webhook URL and returns what it answered; a message / reaction: publishes
 *                          MESSAGE_CREATE / MESSAGE_REACTION_ADD on the Gateway (the only way the real one
 *                          delivers them) and returns { payload, delivered: "gateway", sessions, live }
 *   POST /__fake/gateway/drop | reconnect | invalid-session { resumable? } | withhold-acks | request-heartbeat
 *        | privileged-intents { enabled: ["MESSAGE_CONTENT", …] }   (the portal's toggles; default MESSAGE_CONTENT)
 *        | session-start-limit { remaining?, resetAfter? (ms), maxConcurrency?, total? }   (fakeGateway.ts)
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
import { createFakeGateway, type FakeGatewayTimers, privilegedIntentsNamed } from "./fakeGateway.ts";

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
  /** The privileged intents enabled for the bot (fakeGateway.ts; default MESSAGE_CONTENT only). */
  gatewayPrivilegedIntents?: number;
  /** The Gateway's timers (its heartbeat deadlines); tests pass a clock they move. */
  timers?: FakeGatewayTimers;
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

interface MessageAttachment {
  id: string;
  filename: string;
  size: number;
}

interface MessageFields {
  content: string;
  embeds: unknown[];
  components: unknown[];
  attachments: MessageAttachment[];
}

interface Message extends MessageFields {
  id: string;
  channel_id: string;
  author: { id: string; username: string; bot?: boolean };
  edited_timestamp: string | null;
  webhook_id?: string;
}

interface StoredCommand {
  id: string;
  name: string;
  [field: string]: unknown;
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
    now,
    ...(config.gatewayHeartbeatMs ? { heartbeatIntervalMs: config.gatewayHeartbeatMs } : {}),
    ...(config.gatewayPrivilegedIntents !== undefined ? { privilegedIntents: config.gatewayPrivilegedIntents } : {}),
    ...(config.timers ? { timers: config.timers } : {}),
  });

  let codes = new Map<string, IssuedCode>();
  let accessTokens = new Map<string, { guildId: string; refreshToken: string }>();
  let installedGuilds = new Set<string>();
  /** Commands by scope: a guild id, or "global". */
  let commands = new Map<string, StoredCommand[]>();
  /** Followup message id → its interaction id. */
  let followups = new Map<string, string>();
  let interactions = new Map<string, Interaction>();
  let messages = new Map<string, Message>();
  let recorded: RecordedCall[] = [];
  let rateLimit = { remaining: 0, retryAfter: 1 };

  function reset() {
    codes = new Map();
    accessTokens = new Map();
    installedGuilds = new Set();
    commands = new Map();
    followups = new Map();
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
    // One IDENTIFY past the session start limit resets the bot token: the old one stops working everywhere.
    return request.headers.get("authorization") === `Bot ${config.botToken}` && !gateway.tokenWasReset();
  }

  const invalidForm = (errors: Record<string, unknown>) => discordError(400, 50035, "Invalid Form Body", { errors });

  async function jsonBody(request: Request): Promise<{ ok: true; value: unknown } | { ok: false; response: Response }> {
    if (!(request.headers.get("content-type") ?? "").startsWith("application/json")) {
      return {
        ok: false,
        response: invalidForm({ _errors: [{ code: "CONTENT_TYPE_INVALID", message: "Expected application/json" }] }),
      };
    }
    try {
      return { ok: true, value: JSON.parse(await request.text()) };
    } catch {
      return { ok: false, response: discordError(400, 50109, "The request body contains invalid JSON.") };
    }
  }

  /**
   * A message body: JSON, or multipart/form-data with the JSON in `payload_json` and files in `files[n]`
   * (resources/message.mdx "Uploading Files"). What it holds is checked by `messageFields`.
   */
  async function messageBody(
    request: Request,
  ): Promise<{ ok: true; value: unknown; files: MessageAttachment[] } | { ok: false; response: Response }> {
    if (!(request.headers.get("content-type") ?? "").startsWith("multipart/form-data")) {
      const body = await jsonBody(request);
      return body.ok ? { ...body, files: [] } : body;
    }
    let form: FormData;
    try {
      form = await request.formData();
    } catch {
      return {
        ok: false,
        response: invalidForm({ _errors: [{ code: "INVALID", message: "Malformed multipart body" }] }),
      };
    }
    const files: MessageAttachment[] = [];
    let value: unknown = {};
    for (const [name, part] of form.entries()) {
      if (name === "payload_json") {
        try {
          value = JSON.parse(typeof part === "string" ? part : await part.text());
        } catch {
          return { ok: false, response: discordError(400, 50109, "The request body contains invalid JSON.") };
        }
      } else if (/^files\[\d+\]$/.test(name) && typeof part !== "string") {
        files.push({ id: String(files.length), filename: part.name || name, size: part.size });
      }
    }
    return { ok: true, value, files };
  }

  /**
   * What a message may carry: content (<= 2000), embeds (<= 10), components, sticker_ids, a poll, files. A
   * new message needs at least one of them (resources/message.mdx "Create Message"); an edit needs none.
   */
  function messageFields(
    body: unknown,
    files: MessageAttachment[],
    creating: boolean,
  ): Partial<MessageFields> | Response {
    if (!body || typeof body !== "object" || Array.isArray(body))
      return invalidForm({
        _errors: [{ code: "DICT_TYPE_CONVERT", message: "Only dictionaries may be used in a DictType" }],
      });
    const b = body as {
      content?: unknown;
      embeds?: unknown;
      components?: unknown;
      sticker_ids?: unknown;
      poll?: unknown;
    };
    if (b.content !== undefined && b.content !== null && typeof b.content !== "string")
      return invalidForm({ content: { _errors: [{ code: "BASE_TYPE_STRING", message: "Must be a string." }] } });
    const content = typeof b.content === "string" ? b.content : "";
    if (content.length > 2000)
      return invalidForm({
        content: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: "Must be 2000 or fewer in length." }] },
      });
    const list = (value: unknown, field: string, max: number): unknown[] | Response => {
      if (value === undefined || value === null) return [];
      if (!Array.isArray(value) || value.length > max)
        return invalidForm({
          [field]: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: `Must be an array of ${max} or fewer.` }] },
        });
      return value;
    };
    const embeds = list(b.embeds, "embeds", 10);
    if (embeds instanceof Response) return embeds;
    if (embeds.some((e) => !e || typeof e !== "object"))
      return invalidForm({
        embeds: { _errors: [{ code: "DICT_TYPE_CONVERT", message: "Only dictionaries may be used in a DictType" }] },
      });
    const components = list(b.components, "components", 40);
    if (components instanceof Response) return components;
    const stickers = list(b.sticker_ids, "sticker_ids", 3);
    if (stickers instanceof Response) return stickers;
    const poll = b.poll && typeof b.poll === "object" ? b.poll : null;
    if (creating && !content && !embeds.length && !components.length && !stickers.length && !poll && !files.length)
      return discordError(400, 50006, "Cannot send an empty message");
    // An edit changes only what it names.
    const fields: Partial<MessageFields> = {};
    if (creating || b.content !== undefined) fields.content = content;
    if (creating || b.embeds !== undefined) fields.embeds = embeds;
    if (creating || b.components !== undefined) fields.components = components;
    if (creating || files.length) fields.attachments = files;
    return fields;
  }

  function validateCommand(command: unknown, at: string): string | null {
    if (!command || typeof command !== "object") return `${at}: must be an object`;
    const cmd = command as { name?: unknown; description?: unknown; type?: unknown };
    const type = cmd.type ?? 1;
    if (
      typeof cmd.name !== "string" ||
      !COMMAND_NAME.test(cmd.name) ||
      (type === 1 && cmd.name !== cmd.name.toLowerCase())
    )
      return `${at}.name: invalid command name`;
    if (
      type === 1 &&
      (typeof cmd.description !== "string" || cmd.description.length < 1 || cmd.description.length > 100)
    )
      return `${at}.description: must be between 1 and 100 in length`;
    return null;
  }

  function validateCommands(body: unknown): string | null {
    if (!Array.isArray(body)) return "body must be an array of commands";
    if (body.length > 100) return "at most 100 commands";
    const names = new Set<string>();
    for (const [i, c] of body.entries()) {
      const problem = validateCommand(c, String(i));
      if (problem) return problem;
      const name = (c as { name: string }).name;
      if (names.has(name)) return `${i}.name: duplicate command name`;
      names.add(name);
    }
    return null;
  }

  const commandProblem = (problem: string) => invalidForm({ _errors: [{ code: "INVALID", message: problem }] });

  function storedCommand(guildId: string | null, command: Record<string, unknown>): StoredCommand {
    return {
      id: snowflake(),
      application_id: config.applicationId,
      ...(guildId ? { guild_id: guildId } : {}),
      version: snowflake(),
      type: 1,
      ...command,
    } as unknown as StoredCommand;
  }

  /**
   * A command scope: one guild's commands or the global ones (`/applications/{app}[/guilds/{guild}]/commands[/{id}]`).
   * PUT overwrites all, POST creates one (201) or overwrites the one of that name (200), GET lists or reads one,
   * PATCH edits one, DELETE removes one (204).
   */
  async function commandRoutes(
    request: Request,
    scope: string,
    guildId: string | null,
    id: string | undefined,
  ): Promise<Response> {
    const method = request.method;
    const list = commands.get(scope) ?? [];
    if (id === undefined) {
      if (method === "GET") return Response.json(list);
      if (method !== "PUT" && method !== "POST") return discordError(405, 0, "405: Method Not Allowed");
      const body = await jsonBody(request);
      if (!body.ok) return body.response;
      if (method === "PUT") {
        const problem = validateCommands(body.value);
        if (problem) return commandProblem(problem);
        const stored = (body.value as Record<string, unknown>[]).map((c) => storedCommand(guildId, c));
        commands.set(scope, stored);
        return Response.json(stored);
      }
      const problem = validateCommand(body.value, "command");
      if (problem) return commandProblem(problem);
      const created = body.value as Record<string, unknown>;
      const existing = list.find((c) => c.name === created.name);
      if (existing) {
        Object.assign(existing, created, { version: snowflake() });
        return Response.json(existing, { status: 200 });
      }
      if (list.length >= 100) return discordError(400, 30032, "Maximum number of application commands reached (100)");
      const stored = storedCommand(guildId, created);
      commands.set(scope, [...list, stored]);
      return Response.json(stored, { status: 201 });
    }
    const command = list.find((c) => c.id === id);
    if (!command) return discordError(404, 10063, "Unknown application command");
    if (method === "GET") return Response.json(command);
    if (method === "DELETE") {
      commands.set(
        scope,
        list.filter((c) => c !== command),
      );
      return new Response(null, { status: 204 });
    }
    if (method !== "PATCH") return discordError(405, 0, "405: Method Not Allowed");
    const body = await jsonBody(request);
    if (!body.ok) return body.response;
    const edited = { ...command, ...(body.value as Record<string, unknown>) };
    const problem = validateCommand(edited, "command");
    if (problem) return commandProblem(problem);
    Object.assign(command, body.value, { version: snowflake() });
    return Response.json(command);
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
    let seg: string[];
    try {
      // After /api/v10, percent-decoded as the provider reads it (`messages/%40original` is `@original`).
      seg = path.split("/").filter(Boolean).map(decodeURIComponent);
    } catch {
      return discordError(404, 0, "404: Not Found");
    }
    const method = request.method;

    // Application commands: one guild's (`/applications/{app}/guilds/{guild}/commands[/{id}]`) or global.
    if (seg[0] === "applications" && (seg[2] === "commands" || (seg[2] === "guilds" && seg[4] === "commands"))) {
      const global = seg[2] === "commands";
      const id = global ? seg[3] : seg[5];
      if (seg.length > (global ? 4 : 6)) return discordError(404, 0, "404: Not Found");
      if (!botAuthorized(request)) return discordError(401, 0, "401: Unauthorized");
      if (seg[1] !== config.applicationId) return discordError(403, 50001, "Missing Access");
      if (global) return commandRoutes(request, "global", null, id);
      const guild = guildById(seg[3]!);
      if (!guild) return discordError(404, 10004, "Unknown Guild");
      if (!installedGuilds.has(guild.id)) return discordError(403, 50001, "Missing Access");
      return commandRoutes(request, guild.id, guild.id, id);
    }

    // Interaction callback (no auth: the token is in the path).
    if (seg[0] === "interactions" && seg[3] === "callback" && seg.length === 4 && method === "POST") {
      const interaction = interactions.get(seg[1]!);
      if (!interaction || interaction.token !== seg[2] || now() - interaction.createdAt > INTERACTION_TOKEN_TTL_MS) {
        return discordError(404, 10062, "Unknown interaction");
      }
      if (interaction.acknowledged) return discordError(400, 40060, "Interaction has already been acknowledged.");
      const body = await messageBody(request);
      if (!body.ok) return body.response;
      const type = (body.value as { type?: unknown })?.type;
      if (![4, 5].includes(type as number))
        return invalidForm({
          type: {
            _errors: [{ code: "BASE_TYPE_CHOICES", message: "Value must be one of (1, 4, 5, 6, 7, 8, 9, 10, 12)." }],
          },
        });
      if (type === 4) {
        const fields = messageFields((body.value as { data?: unknown }).data, body.files, true);
        if (fields instanceof Response) return fields;
        storeMessage(interaction.channelId, fields, config.applicationId, `original:${interaction.id}`);
      }
      interaction.acknowledged = true;
      interaction.responses.push(body.value);
      return new Response(null, { status: 204 });
    }

    // Interaction webhooks: the original response (`@original`) and followups, each to GET, PATCH or DELETE.
    if (seg[0] === "webhooks" && seg.length >= 3) {
      if (seg[1] !== config.applicationId) return discordError(404, 10015, "Unknown Webhook");
      const interaction = liveInteraction(seg[2]!);
      if (!interaction) return discordError(401, 50027, "Invalid Webhook Token");
      if (seg.length === 3) {
        if (method !== "POST") return discordError(405, 0, "405: Method Not Allowed");
        if (!interaction.acknowledged) return discordError(404, 10062, "Unknown interaction");
        const body = await messageBody(request);
        if (!body.ok) return body.response;
        const fields = messageFields(body.value, body.files, true);
        if (fields instanceof Response) return fields;
        const message = storeMessage(interaction.channelId, fields, config.applicationId);
        followups.set(message.id, interaction.id);
        interaction.responses.push({ followup: body.value });
        return Response.json(message);
      }
      if (seg.length !== 5 || seg[3] !== "messages") return discordError(404, 0, "404: Not Found");
      const original = seg[4] === "@original";
      const key = original ? `original:${interaction.id}` : seg[4]!;
      const existing = messages.get(key);
      const ours = existing && (original || followups.get(existing.id) === interaction.id) ? existing : undefined;
      if (method === "GET" || method === "DELETE") {
        if (!ours) return discordError(404, 10008, "Unknown Message");
        if (method === "GET") return Response.json(ours);
        deleteMessage(ours);
        return new Response(null, { status: 204 });
      }
      if (method !== "PATCH") return discordError(405, 0, "405: Method Not Allowed");
      if (original ? !interaction.acknowledged : !ours) return discordError(404, 10008, "Unknown Message");
      const body = await messageBody(request);
      if (!body.ok) return body.response;
      const fields = messageFields(body.value, body.files, false);
      if (fields instanceof Response) return fields;
      const message = storeMessage(interaction.channelId, fields, config.applicationId, key);
      interaction.responses.push({ edit: body.value });
      return Response.json(message);
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

    // Channel messages (Bot auth): POST a new one; GET, PATCH or DELETE one.
    if (seg[0] === "channels" && seg[2] === "messages" && (seg.length === 3 || seg.length === 4)) {
      if (!botAuthorized(request)) return discordError(401, 0, "401: Unauthorized");
      const guild = guildOfChannel(seg[1]!);
      if (!guild) return discordError(404, 10003, "Unknown Channel");
      if (!installedGuilds.has(guild.id)) return discordError(403, 50001, "Missing Access");
      if (seg.length === 3) {
        if (method !== "POST") return discordError(405, 0, "405: Method Not Allowed");
        const body = await messageBody(request);
        if (!body.ok) return body.response;
        const fields = messageFields(body.value, body.files, true);
        if (fields instanceof Response) return fields;
        return Response.json(storeMessage(seg[1]!, fields));
      }
      const existing = messages.get(seg[3]!);
      if (!existing || existing.channel_id !== seg[1]) return discordError(404, 10008, "Unknown Message");
      if (method === "GET") return Response.json(existing);
      if (method === "DELETE") {
        // The bot may delete its own messages; others' need MANAGE_MESSAGES, which the fake's bot is not granted.
        if (!existing.author.bot) return discordError(403, 50013, "Missing Permissions");
        deleteMessage(existing);
        return new Response(null, { status: 204 });
      }
      if (method !== "PATCH") return discordError(405, 0, "405: Method Not Allowed");
      if (!existing.author.bot) return discordError(403, 50005, "Cannot edit a message authored by another user");
      const body = await messageBody(request);
      if (!body.ok) return body.response;
      const fields = messageFields(body.value, body.files, false);
      if (fields instanceof Response) return fields;
      return Response.json(storeMessage(seg[1]!, fields, undefined, existing.id));
    }

    return discordError(404, 0, "404: Not Found");
  }

  /** A new message, or an edit of the one stored under `key` (only the fields the edit names change). */
  function storeMessage(channelId: string, fields: Partial<MessageFields>, webhookId?: string, key?: string): Message {
    const existing = key ? messages.get(key) : undefined;
    if (existing) {
      Object.assign(existing, fields, { edited_timestamp: new Date(now()).toISOString() });
      return existing;
    }
    const message: Message = {
      id: snowflake(),
      channel_id: channelId,
      content: "",
      embeds: [],
      components: [],
      attachments: [],
      ...fields,
      author: { id: config.applicationId, username: "platform-bot", bot: true },
      edited_timestamp: null,
      ...(webhookId ? { webhook_id: webhookId } : {}),
    };
    messages.set(message.id, message);
    if (key) messages.set(key, message);
    return message;
  }

  function deleteMessage(message: Message) {
    for (const [key, value] of messages) if (value === message) messages.delete(key);
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
          storeMessage(interaction.channelId, { content }, config.applicationId, `original:${interaction.id}`);
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
    const body = async () => ((await request.json().catch(() => ({}))) ?? {}) as Record<string, unknown>;
    // A switch answers 204, unless it returns its own (error) response.
    const switches: Record<string, () => unknown> = {
      "/__fake/gateway/drop": gateway.drop,
      "/__fake/gateway/reconnect": gateway.reconnect,
      "/__fake/gateway/withhold-acks": gateway.withholdAcks,
      "/__fake/gateway/request-heartbeat": gateway.requestHeartbeat,
      "/__fake/gateway/invalid-session": async () => gateway.invalidSession((await body()).resumable === true),
      "/__fake/gateway/privileged-intents": async () => {
        const mask = privilegedIntentsNamed((await body()).enabled);
        if (mask === null)
          return Response.json(
            { error: 'enabled must list privileged intents: "GUILD_MEMBERS", "GUILD_PRESENCES", "MESSAGE_CONTENT"' },
            { status: 400 },
          );
        gateway.setPrivilegedIntents(mask);
      },
      "/__fake/gateway/session-start-limit": async () => {
        const input = await body();
        const change: Parameters<typeof gateway.setSessionStartLimit>[0] = {};
        for (const [field, key] of [
          ["remaining", "remaining"],
          ["resetAfter", "resetAfterMs"],
          ["maxConcurrency", "maxConcurrency"],
          ["total", "total"],
        ] as const) {
          const value = input[field];
          if (value === undefined) continue;
          if (typeof value !== "number" || !Number.isFinite(value) || value < 0)
            return Response.json({ error: `${field} must be a number >= 0` }, { status: 400 });
          change[key] = value;
        }
        gateway.setSessionStartLimit(change);
      },
    };
    const run = switches[path];
    if (!run) return new Response("Not found", { status: 404 });
    const answer = await run();
    return answer instanceof Response ? answer : new Response(null, { status: 204 });
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
