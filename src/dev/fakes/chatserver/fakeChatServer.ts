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
 *   POST /api/v10/interactions/{id}/{token}/callback[?with_response=true]   the first answer (fakeInteractions.ts:
 *                                    the types each interaction takes; 9 opens a modal)
 *   GET | PATCH | DELETE /api/v10/webhooks/{app}/{token}/messages/@original   (or %40original)
 *   POST /api/v10/webhooks/{app}/{token}                        followup (flags 64: ephemeral)
 *   GET | PATCH | DELETE /api/v10/webhooks/{app}/{token}/messages/{message}   a followup
 *   GET  /api/v10/channels/{channel}                            (Bot auth)
 *   POST /api/v10/channels/{channel}/messages                   (Bot auth)
 *   GET | PATCH | DELETE /api/v10/channels/{channel}/messages/{message}   (Bot auth)
 * Message bodies are JSON or multipart/form-data (`payload_json` + `files[n]`); a new message needs content,
 * embeds, components, stickers, a poll or a file (else 50006), content <= 2000, embeds <= 10, components within
 * the provider's rules (fakeComponentRules.ts, else 50035).
 *   GET  /api/v10/gateway/bot                                   (Bot auth) { url, shards: 1, session_start_limit }
 *   GET  /gateway?v=10&encoding=json  (Upgrade: websocket)      the Gateway (fakeGateway.ts)
 * Test switches (not Discord):
 *   POST /__fake/trigger   { kind: "command"|"component"|"modal"|"message"|"reaction", guildId, channelId?,
 *                          name?, text?, customId?, values?, fields?, messageId?, deliveries? }
 *                          (`resourceId`, `channel`, `message` name the guild, channel, message as well: the
 *                          test-event route's neutral fields)
 *                          a command, a click on a component a message shows, a submit of an open modal: signs an
 *                          interaction with the fake's Ed25519 key, POSTs it to the plugin's webhook URL and
 *                          returns what it answered and what came of the interaction (fakeInteractions.ts); a
 *                          message / reaction: publishes MESSAGE_CREATE / MESSAGE_REACTION_ADD on the Gateway
 *                          (the only way the real one delivers them) and returns
 *                          { payload, delivered: "gateway", sessions, live }
 *   POST /__fake/gateway/drop | reconnect | invalid-session { resumable? } | withhold-acks | request-heartbeat
 *        | privileged-intents { enabled: ["MESSAGE_CONTENT", …] }   (the portal's toggles; default MESSAGE_CONTENT)
 *        | session-start-limit { remaining?, resetAfter? (ms), maxConcurrency?, total? }   (fakeGateway.ts)
 *   GET  /__fake/gateway   sessions, live connections, identifies, what the Gateway saw
 *   POST /__fake/rate-limit { count, retryAfter? }  the next `count` REST calls answer 429 with Retry-After
 *   GET  /__fake/recorded  every API call received: { method, path, auth, body, status }
 *   GET  /__fake/chat?resourceId=<guild>   its channels as a member sees them, and the open modals (chatView.ts)
 *   GET  /__fake/state     guilds, installs, commands, messages, interactions, open modals
 *   POST /__fake/reset     forget everything but the configuration
 */
import type { ChatView } from "../chatView.ts";
import { createApplicationCommands } from "./fakeApplicationCommands.ts";
import { chatServerView } from "./fakeChatView.ts";
import { createFakeGateway, type FakeGatewayTimers, privilegedIntentsNamed } from "./fakeGateway.ts";
import { guildMember, partialGuildMember } from "./fakeGuildMember.ts";
import { createFakeChatServerOAuth } from "./fakeChatServerOAuth.ts";
import { createFakeInteractions } from "./fakeInteractions.ts";
import type { InteractionTrigger } from "./fakeInteractionTriggers.ts";
import { createMessageStore, discordError, messageBody, messageFields, snowflake } from "./fakeMessages.ts";

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
  gatewayHeartbeatMS?: number;
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

export function createFakeChatServer(config: FakeChatServerConfig) {
  const guilds = config.guilds ?? [TEST_GUILD, OTHER_GUILD];
  const now = config.now ?? Date.now;
  const deliver = config.deliver ?? ((request: Request) => fetch(request));
  const gateway = createFakeGateway({
    baseUrl: config.baseUrl,
    botToken: config.botToken,
    applicationId: config.applicationId,
    now,
    ...(config.gatewayHeartbeatMS ? { heartbeatIntervalMS: config.gatewayHeartbeatMS } : {}),
    ...(config.gatewayPrivilegedIntents !== undefined ? { privilegedIntents: config.gatewayPrivilegedIntents } : {}),
    ...(config.timers ? { timers: config.timers } : {}),
  });

  const oauth = createFakeChatServerOAuth({
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    ...(config.redirectUris ? { redirectUris: config.redirectUris } : {}),
    guilds,
    ownerId: TEST_USER.id,
    now,
  });
  const commands = createApplicationCommands(config.applicationId);
  const messages = createMessageStore({ id: config.applicationId, username: "platform-bot", bot: true }, now);
  const interactions = createFakeInteractions({
    applicationId: config.applicationId,
    signingSeed: config.signingSeed,
    webhookUrl: config.webhookUrl,
    deliver,
    now,
    messages,
    user: TEST_USER,
  });
  let recorded: RecordedCall[] = [];
  let rateLimit = { remaining: 0, retryAfter: 1 };

  function reset() {
    oauth.reset();
    commands.reset();
    interactions.reset();
    messages.reset();
    recorded = [];
    rateLimit = { remaining: 0, retryAfter: 1 };
    gateway.reset();
  }

  const guildById = (id: string) => guilds.find((g) => g.id === id);
  const guildOfChannel = (channelId: string) => guilds.find((g) => g.channels.includes(channelId));

  // ------------------------------------------------------------------ REST

  function botAuthorized(request: Request): boolean {
    // One IDENTIFY past the session start limit resets the bot token: the old one stops working everywhere.
    return request.headers.get("authorization") === `Bot ${config.botToken}` && !gateway.tokenWasReset();
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
      if (global) return commands.routes(request, "global", null, id);
      const guild = guildById(seg[3]!);
      if (!guild) return discordError(404, 10004, "Unknown Guild");
      if (!oauth.installed(guild.id)) return discordError(403, 50001, "Missing Access");
      return commands.routes(request, guild.id, guild.id, id);
    }

    // Interaction callback (no auth: the token is in the path).
    if (seg[0] === "interactions" && seg[3] === "callback" && seg.length === 4 && method === "POST")
      return interactions.callback(
        request,
        seg[1]!,
        seg[2]!,
        new URL(request.url).searchParams.get("with_response") === "true",
      );

    // Interaction webhooks: followups, and the original answer and followups to GET, PATCH or DELETE.
    if (seg[0] === "webhooks" && seg.length >= 3) return interactions.webhook(request, seg);

    // One channel (Bot auth): which guild it is in.
    if (seg[0] === "channels" && seg.length === 2 && method === "GET") {
      if (!botAuthorized(request)) return discordError(401, 0, "401: Unauthorized");
      const guild = guildOfChannel(seg[1]!);
      if (!guild) return discordError(404, 10003, "Unknown Channel");
      if (!oauth.installed(guild.id)) return discordError(403, 50001, "Missing Access");
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
      if (!oauth.installed(guild.id)) return discordError(403, 50001, "Missing Access");
      if (seg.length === 3) {
        if (method !== "POST") return discordError(405, 0, "405: Method Not Allowed");
        const body = await messageBody(request);
        if (!body.ok) return body.response;
        const fields = messageFields(body.value, body.files, true);
        if (fields instanceof Response) return fields;
        return Response.json(messages.create(seg[1]!, fields));
      }
      const existing = messages.get(seg[3]!);
      if (!existing || existing.channel_id !== seg[1]) return discordError(404, 10008, "Unknown Message");
      if (method === "GET") return Response.json(existing);
      if (method === "DELETE") {
        // The bot may delete its own messages; others' need MANAGE_MESSAGES, which the fake's bot is not granted.
        if (!existing.author.bot) return discordError(403, 50013, "Missing Permissions");
        messages.delete(existing);
        return new Response(null, { status: 204 });
      }
      if (method !== "PATCH") return discordError(405, 0, "405: Method Not Allowed");
      if (!existing.author.bot) return discordError(403, 50005, "Cannot edit a message authored by another user");
      const body = await messageBody(request);
      if (!body.ok) return body.response;
      const fields = messageFields(body.value, body.files, false);
      if (fields instanceof Response) return fields;
      return Response.json(messages.edit(existing, fields));
    }

    return discordError(404, 0, "404: Not Found");
  }

  // ------------------------------------------------------------------ trigger

  /**
   * A user's message or reaction in a server: a Gateway dispatch, as the real chat server sends it. The message
   * stays in its channel (a reaction goes on the channel's newest message, if there is one).
   */
  function publishEvent(kind: "message" | "reaction", guildId: string, channelId: string, text: string) {
    const t = kind === "message" ? "MESSAGE_CREATE" : "MESSAGE_REACTION_ADD";
    let d: Record<string, unknown>;
    if (kind === "message") {
      const message = messages.create(channelId, { content: text }, { author: TEST_USER });
      d = { ...message, guild_id: guildId, member: partialGuildMember(), timestamp: new Date(now()).toISOString() };
    } else {
      d = {
        user_id: TEST_USER.id,
        channel_id: channelId,
        message_id: messages.inChannel(channelId).at(-1)?.id ?? snowflake(),
        guild_id: guildId,
        member: guildMember(TEST_USER),
        emoji: { id: null, name: text || "👍" },
      };
    }
    const published = gateway.publish(t, d);
    return { payload: { op: 0, t, d }, delivered: "gateway", sessions: published.sessions, live: published.live };
  }

  const stringList = (value: unknown): string[] | undefined =>
    Array.isArray(value) ? value.map(String) : typeof value === "string" ? value.split(",").filter(Boolean) : undefined;

  /**
   * `POST /__fake/trigger`: `kind` command | component | modal | message | reaction, `guildId` (or the neutral
   * `resourceId`), `channelId` (or `channel`), and per kind: `name`, `text` (a command's text option, a message's
   * content, a reaction's emoji); `customId`, `values`, `messageId` (or `message`) for a click; `customId`,
   * `fields` for a modal submit.
   */
  async function trigger(request: Request): Promise<Response> {
    let input: Record<string, unknown>;
    try {
      input = (await request.json()) as Record<string, unknown>;
    } catch {
      return Response.json({ error: "body must be JSON" }, { status: 400 });
    }
    const requested = String(input.guildId ?? input.resourceId ?? TEST_GUILD.id);
    const guild = guildById(requested);
    const guildId = guild?.id ?? requested;
    const askedChannel = input.channelId ?? input.channel;
    const channelId = typeof askedChannel === "string" ? askedChannel : null;
    if (channelId && guild && !guild.channels.includes(channelId))
      return Response.json({ error: `Channel ${channelId} is not in server ${guildId}.` }, { status: 400 });
    const text = typeof input.text === "string" ? input.text : "";
    if (input.kind === "message" || input.kind === "reaction")
      return Response.json(publishEvent(input.kind, guildId, channelId ?? guild?.channels[0] ?? "0", text));
    if (input.kind !== "command" && input.kind !== "component" && input.kind !== "modal")
      return Response.json(
        { error: 'kind must be "command", "component", "modal", "message" or "reaction"' },
        { status: 400 },
      );
    const fields = input.fields;
    const messageId = input.messageId ?? input.message;
    const t: InteractionTrigger = {
      kind: input.kind,
      guildId,
      channelId,
      guildChannels: guild?.channels ?? [],
      ...(typeof input.name === "string" && input.name ? { name: input.name } : {}),
      ...(text ? { text } : {}),
      ...(typeof input.customId === "string" ? { customId: input.customId } : {}),
      ...(stringList(input.values) ? { values: stringList(input.values) } : {}),
      ...(fields && typeof fields === "object" && !Array.isArray(fields)
        ? { fields: Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, String(v)])) }
        : {}),
      ...(typeof messageId === "string" ? { messageId } : {}),
      deliveries: Math.min(Math.max(Number(input.deliveries ?? 1) || 1, 1), 5),
      ...(typeof input.timestamp === "string" ? { timestamp: input.timestamp } : {}),
    };
    return interactions.send(t);
  }

  /** `GET /__fake/chat?resourceId=<guild>`: the guild's channels as its members see them (fakeChatView.ts). */
  function chat(url: URL): Response {
    const guild = guildById(url.searchParams.get("resourceId") ?? url.searchParams.get("guildId") ?? "");
    if (!guild) return Response.json({ error: "resourceId must name a server of the fake" }, { status: 404 });
    const view: ChatView = chatServerView(guild, TEST_USER.id, messages, interactions.openModals(guild.id));
    return Response.json(view);
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
          ["resetAfter", "resetAfterMS"],
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
      if (path === "/__fake/chat" && request.method === "GET") return chat(url);
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
        const { interactions: all, modals } = interactions.state();
        return Response.json({
          guilds,
          installedGuilds: [...oauth.installedGuilds()],
          commands: Object.fromEntries(commands.byScope()),
          messages: messages.all(),
          interactions: [...all.values()].map(
            ({ id, type, guildId, acknowledged, answeredWith, failed, responses }) => ({
              id,
              type,
              guildId,
              acknowledged,
              answeredWith,
              failed,
              responses,
            }),
          ),
          modals,
        });
      }
      return new Response("Not found", { status: 404 });
    }
    if (path === "/gateway" || path === "/gateway/") return gateway.upgrade(request);
    if (path === "/oauth2/authorize") {
      if (request.method === "GET") return oauth.authorizePage(url);
      if (request.method === "POST") return oauth.authorizeAnswer(request);
    }
    const clone = request.clone();
    let response: Response;
    if (path === "/api/oauth2/token" || path === "/api/v10/oauth2/token") {
      response =
        request.method === "POST" ? await oauth.token(request) : discordError(405, 0, "405: Method Not Allowed");
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
    state: () => ({
      installedGuilds: oauth.installedGuilds(),
      commands: commands.byScope(),
      messages: new Map(messages.all().map((m) => [m.id, m])),
      interactions: interactions.state().interactions,
      modals: interactions.state().modals,
    }),
    gateway,
  };
}

export type FakeChatServer = ReturnType<typeof createFakeChatServer>;
