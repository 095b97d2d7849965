import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createFakeChatServer, OTHER_GUILD, TEST_GUILD } from "#src/dev/fakes/chatserver/fakeChatServer.ts";
import { createFakeWorkspace, DEFAULT_TEAM } from "#src/dev/fakes/workspace/fakeWorkspace.ts";
import { ed25519PublicKeyHex, verifyEd25519Webhook } from "#src/core/crypto/ed25519.ts";
import { verifyWorkspaceSignature } from "#src/plugins/workspace/workspaceSignature.ts";
import { claimResource, listProjectResources } from "#src/workers/db/resourceClaims.ts";
import type { DevApiEnv } from "#src/dev/routes/devApiEnv.ts";
import devApi from "#src/dev/routes/devApiWorker.ts";
import { DEFAULT_CALL_WAIT, fakeBinding, sendTestEvent } from "#src/dev/routes/pluginTestEvents.ts";
import { PLUGINS, TRIGGERABLE_PLUGINS } from "#src/contracts/pluginRegistry.ts";
import { andList } from "#src/core/wordList.ts";
import {
  apiHarness,
  fakeDispatcher,
  callApi as callAnyApi,
  expectError,
  jsonOfSize,
  userWithProject,
  type ApiCall,
} from "#test/support/workerd/index.ts";

const SEED = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
const APP = "999999999999999999";
const BOT_TOKEN = "fake-bot-token";
const SIGNING_SECRET = "fake-signing-secret";

/** The API env of the tests plus the fake providers `platform dev` binds (absent = a platform without them). */
function apiEnvWith(fakes: Partial<Pick<DevApiEnv, `FAKE_${string}`>>): DevApiEnv {
  return { ...apiHarness().env, ...fakes };
}

/** The route exists only in the API worker `platform dev` runs. */
function callApi(method: string, path: string, call: ApiCall = {}): Promise<Response> {
  return callAnyApi(method, path, { ...call, worker: devApi });
}

function asFetcher(handle: (request: Request) => Promise<Response> | Response): Fetcher {
  return {
    fetch: (input: RequestInfo | URL, init?: RequestInit) => Promise.resolve(handle(new Request(input, init))),
  } as unknown as Fetcher;
}

/** A fake that must not be contacted: records any request and answers 500. */
function untouchedFake(): { fetcher: Fetcher; requests: string[] } {
  const requests: string[] = [];
  return {
    requests,
    fetcher: asFetcher((request) => {
      requests.push(`${request.method} ${new URL(request.url).pathname}`);
      return new Response("should not be called", { status: 500 });
    }),
  };
}

interface Delivery {
  headers: Headers;
  body: string;
  json: Record<string, any>;
}

/**
 * The real fake chat server; the "plugin" it delivers to is a stub that keeps
 * the signed webhook and answers `answer(payload)`, then (like the project's
 * handler behind the real plugin) calls the fake's REST API via `then`.
 */
function chatWorld(
  answer: (payload: Record<string, any>) => unknown,
  then?: (payload: Record<string, any>, fake: ReturnType<typeof createFakeChatServer>) => Promise<unknown>,
) {
  const deliveries: Delivery[] = [];
  const background: Promise<unknown>[] = [];
  const fake = createFakeChatServer({
    baseUrl: "https://chat.fake",
    applicationId: APP,
    clientId: APP,
    clientSecret: "client-secret",
    botToken: BOT_TOKEN,
    signingSeed: SEED,
    webhookUrl: "https://chat-plugin.test/webhook",
    async deliver(request) {
      const body = await request.text();
      const json = JSON.parse(body) as Record<string, any>;
      deliveries.push({ headers: request.headers, body, json });
      if (then) background.push(new Promise((resolve) => setTimeout(resolve, 100)).then(() => then(json, fake)));
      return Response.json(answer(json));
    },
  });
  return { fake, deliveries, background, fetcher: asFetcher((request) => fake.fetch(request)) };
}

async function installedChatProject(slug = "alpha") {
  const owner = await userWithProject("ada@example.com", slug);
  // Two installs: the route uses the newest claim.
  await claimResource(
    env.DB,
    {
      pluginId: "chatserver",
      resourceType: "server",
      projectId: owner.row.id,
      externalResourceId: OTHER_GUILD.id,
      displayName: OTHER_GUILD.name,
    },
    Date.now() - 60_000,
  );
  await claimResource(env.DB, {
    pluginId: "chatserver",
    resourceType: "server",
    projectId: owner.row.id,
    externalResourceId: TEST_GUILD.id,
    displayName: TEST_GUILD.name,
  });
  return owner;
}

describe("the deployed API worker (src/workers/api/index.ts)", () => {
  it("has no test-events route: 404 even with the fakes bound, and nothing reaches them", async () => {
    const { user } = await installedChatProject();
    const chat = untouchedFake();
    const workspace = untouchedFake();
    const response = await callAnyApi("POST", "/projects/alpha/plugins/chatserver/test-events", {
      token: user.token,
      body: { kind: "message", text: "hi" },
      env: apiEnvWith({ FAKE_CHATSERVER: chat.fetcher, FAKE_WORKSPACE: workspace.fetcher }),
    });
    const error = await expectError(response, 404, "not_found");
    expect(error.error.message).toBe("No route for POST /projects/alpha/plugins/chatserver/test-events.");
    expect([...chat.requests, ...workspace.requests]).toEqual([]);
  });
});

describe("POST /projects/:slug/plugins/:plugin/test-events: refusals (nothing reaches the fake)", () => {
  const tooLong = "x".repeat(2001);
  it.each([
    ["without a CLI token", { token: false }, 401, "unauthorized", /token/i],
    ["another user's project", { as: "bob" }, 404, "not_found", /No project named "alpha"/],
    ["an unknown plugin", { plugin: "fax" }, 404, "not_found", /No plugin named "fax"/],
    [
      "a kind the plugin does not have",
      { body: { kind: "mention" } },
      400,
      "invalid_input",
      /kind must be one of command, message, reaction, component, modal for chatserver \(got "mention"\)/,
    ],
    [
      "a workspace command",
      { plugin: "workspace", body: { kind: "command", name: "hello" } },
      400,
      "invalid_input",
      /kind must be one of message, mention, reaction, action, view for workspace/,
    ],
    ["a missing kind", { body: { text: "hi" } }, 400, "invalid_input", /kind must be one of/],
    [
      "a command without a name",
      { body: { kind: "command", text: "hi" } },
      400,
      "invalid_input",
      /command needs a name/,
    ],
    [
      "a command name with its slash",
      { body: { kind: "command", name: "/hello" } },
      400,
      "invalid_input",
      /without the leading \//,
    ],
    [
      "a command name over 32 characters",
      { body: { kind: "command", name: "a".repeat(33) } },
      400,
      "invalid_input",
      /1–32/,
    ],
    [
      "a name on a message",
      { body: { kind: "message", name: "hello" } },
      400,
      "invalid_input",
      /name applies to chatserver commands only/,
    ],
    [
      "text that is not a string",
      { body: { kind: "message", text: 42 } },
      400,
      "invalid_input",
      /text must be a string/,
    ],
    [
      "empty text",
      { body: { kind: "message", text: "" } },
      400,
      "invalid_input",
      /text must be 1–2000 characters \(got 0\)/,
    ],
    [
      "text over 2000 characters",
      { body: { kind: "message", text: tooLong } },
      400,
      "invalid_input",
      /text must be 1–2000 characters \(got 2001\)/,
    ],
    [
      "an unknown field",
      { body: { kind: "message", thread: "C1" } },
      400,
      "invalid_input",
      /Unknown field\(s\) "thread": a test event takes kind, text, name, channel, message, customId/,
    ],
    [
      "a click without the component's customId",
      { body: { kind: "component" } },
      400,
      "invalid_input",
      /A chatserver component needs customId \(the component's or modal's customId; --custom-id in the CLI\)/,
    ],
    [
      "a customId over 100 characters",
      { body: { kind: "component", customId: "a".repeat(101) } },
      400,
      "invalid_input",
      /customId must be a string of 1–100 characters/,
    ],
    [
      "values on a modal submit",
      { body: { kind: "modal", customId: "m", values: ["a"] } },
      400,
      "invalid_input",
      /values applies to chatserver component only/,
    ],
    [
      "values that are not a list",
      { body: { kind: "component", customId: "pick", values: "a,b" } },
      400,
      "invalid_input",
      /values must be an array of at most 25 strings/,
    ],
    [
      "fields that are not strings",
      { body: { kind: "modal", customId: "m", fields: { title: 42 } } },
      400,
      "invalid_input",
      /fields\.title must be a string of at most 4000 characters/,
    ],
    [
      "an actionId on the chat server",
      { body: { kind: "component", customId: "a", actionId: "x" } },
      400,
      "invalid_input",
      /actionId applies to workspace action only/,
    ],
    [
      "a workspace view without its callbackId",
      { plugin: "workspace", body: { kind: "view", fields: { title: "x" } } },
      400,
      "invalid_input",
      /A workspace view needs callbackId/,
    ],
    [
      "a channel that is not an id",
      { body: { kind: "message", channel: "#general" } },
      400,
      "invalid_input",
      /channel must be a channel or message id/,
    ],
    ["malformed JSON", { body: '{"kind": "message"' }, 400, "malformed_json", /not valid JSON/],
    ["a JSON array", { body: "[]" }, 400, "malformed_json", /JSON object/],
    [
      "an oversized body",
      { body: jsonOfSize({ kind: "message" }, 17 * 1024) },
      413,
      "payload_too_large",
      /larger than 16384 bytes/,
    ],
    [
      "the dev API worker without the fake providers bound",
      { fake: false },
      404,
      "not_found",
      /Test events need the local fake providers: they work with `platform dev` only\./,
    ],
  ] as const)("refuses %s", async (_name, c: Record<string, any>, status, code, message) => {
    const { user } = await installedChatProject();
    const bob = await userWithProject("bob@example.com", "beta");
    const chat = untouchedFake();
    const workspace = untouchedFake();
    const response = await callApi("POST", `/projects/alpha/plugins/${c.plugin ?? "chatserver"}/test-events`, {
      ...(c.token === false ? {} : { token: c.as === "bob" ? bob.user.token : user.token }),
      body: c.body ?? { kind: "message", text: "hi" },
      env: apiEnvWith(c.fake === false ? {} : { FAKE_CHATSERVER: chat.fetcher, FAKE_WORKSPACE: workspace.fetcher }),
    });
    const error = await expectError(response, status, code);
    expect(error.error.message).toMatch(message);
    expect([...chat.requests, ...workspace.requests]).toEqual([]);
  });

  it("reaches each plugin's fake at FAKE_<ID>, the binding `platform dev` gives the API worker", () => {
    expect(fakeBinding("chatserver")).toBe("FAKE_CHATSERVER");
    expect(fakeBinding("workspace")).toBe("FAKE_WORKSPACE");
  });

  const withEvents = andList(TRIGGERABLE_PLUGINS.map(({ id }) => id));
  it.each(PLUGINS.filter((plugin) => !("triggers" in plugin)).map(({ id }) => [id]))(
    "refuses %s, which has no events, naming the plugins that have",
    async (plugin) => {
      const { user } = await installedChatProject();
      const response = await callApi("POST", `/projects/alpha/plugins/${plugin}/test-events`, {
        token: user.token,
        body: { kind: "message" },
        env: apiEnvWith({ FAKE_CHATSERVER: untouchedFake().fetcher, FAKE_WORKSPACE: untouchedFake().fetcher }),
      });
      const error = await expectError(response, 400, "invalid_input");
      expect(error.error.message).toBe(
        `The ${plugin} plugin has no events to send: test events exist for ${withEvents}.`,
      );
    },
  );

  it.each(TRIGGERABLE_PLUGINS.map((plugin) => [plugin.id, plugin.triggers.kinds] as const))(
    "refuses a kind %s does not have, listing its kinds (%j)",
    async (plugin, kinds) => {
      const { user } = await installedChatProject();
      const response = await callApi("POST", `/projects/alpha/plugins/${plugin}/test-events`, {
        token: user.token,
        body: { kind: "fax" },
        env: apiEnvWith({ [fakeBinding(plugin)]: untouchedFake().fetcher }),
      });
      const error = await expectError(response, 400, "invalid_input");
      expect(error.error.message).toBe(`kind must be one of ${kinds.join(", ")} for ${plugin} (got "fax").`);
    },
  );

  it("answers 409 with the install command when the project has no install of that plugin yet", async () => {
    const { user } = await installedChatProject();
    const workspace = untouchedFake();
    const error = await expectError(
      await callApi("POST", "/projects/alpha/plugins/workspace/test-events", {
        token: user.token,
        body: { kind: "message" },
        env: apiEnvWith({ FAKE_WORKSPACE: workspace.fetcher }),
      }),
      409,
      "conflict",
    );
    expect(error.error.message).toBe(
      'Project "alpha" has no workspace install yet: run `platform plugin install workspace` first.',
    );
    expect(workspace.requests).toEqual([]);
  });

  it("answers 502 with the fake's answer when the fake refuses the trigger", async () => {
    const { user } = await installedChatProject();
    const fake = asFetcher((request) =>
      new URL(request.url).pathname === "/__fake/recorded"
        ? Response.json([])
        : Response.json({ error: "a command needs a name" }, { status: 400 }),
    );
    const response = await callApi("POST", "/projects/alpha/plugins/chatserver/test-events", {
      token: user.token,
      body: { kind: "message" },
      env: apiEnvWith({ FAKE_CHATSERVER: fake }),
    });
    const error = (await expectError(response, 502, "upstream_error")) as {
      error: { message: string; details?: unknown };
    };
    expect(error.error.message).toBe(
      'The fake chatserver provider refused the test event (400): {"error":"a command needs a name"}',
    );
    expect(error.error.details).toEqual({ status: 400, answer: { error: "a command needs a name" } });
  });
});

describe("POST /projects/:slug/plugins/:plugin/test-events: sending", () => {
  it("chatserver command: the fake signs an interaction for the newest claimed server; the answer lists the handler's provider calls", async () => {
    const { user } = await installedChatProject();
    const world = chatWorld(
      () => ({ type: 5 }), // deferred, as the real plugin answers a command
      (payload, fake) =>
        fake.fetch(
          new Request(`https://chat.fake/api/v10/webhooks/${APP}/${payload.token}/messages/@original`, {
            method: "PATCH",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ content: "Hello, Test User!" }),
          }),
        ),
    );
    // How many calls the fake had recorded at each of the route's polls.
    const polls: number[] = [];
    const fetcher = asFetcher(async (request) => {
      const response = await world.fake.fetch(request);
      if (new URL(request.url).pathname === "/__fake/recorded")
        polls.push(((await response.clone().json()) as unknown[]).length);
      return response;
    });
    const response = await callApi("POST", "/projects/alpha/plugins/chatserver/test-events", {
      token: user.token,
      body: { kind: "command", name: "hello", text: "hi" },
      env: apiEnvWith({ FAKE_CHATSERVER: fetcher }),
    });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    // It stopped once the calls went quiet, not at the 5 s cap: from the poll that saw the handler's
    // call, polls come at least pollMs apart and the wait ends after quietMs without a change.
    const sinceCall = polls.slice(polls.findIndex((n) => n > 0));
    expect(polls[0]).toBe(0);
    expect(sinceCall.every((n) => n === 1)).toBe(true);
    expect(sinceCall.length).toBeLessThanOrEqual(Math.floor(DEFAULT_CALL_WAIT.quietMs / DEFAULT_CALL_WAIT.pollMs) + 2);
    await Promise.all(world.background);

    // What the fake delivered: one correctly signed interaction for the newest claimed server.
    expect(world.deliveries).toHaveLength(1);
    const [delivery] = world.deliveries;
    const check = await verifyEd25519Webhook(
      await ed25519PublicKeyHex(SEED),
      delivery!.headers.get("X-Signature-Ed25519"),
      delivery!.headers.get("X-Signature-Timestamp"),
      delivery!.body,
    );
    expect(check.ok).toBe(true);
    expect(delivery!.json).toMatchObject({
      type: 2,
      application_id: APP,
      guild_id: TEST_GUILD.id,
      data: { name: "hello", options: [{ name: "text", type: 3, value: "hi" }] },
    });

    const body = await response.json();
    expect(body).toEqual({
      sent: {
        kind: "command",
        name: "hello",
        text: "hi",
        resource: { plugin: "chatserver", externalId: TEST_GUILD.id, displayName: "Test Server" },
      },
      summary: 'Sent a signed command /hello "hi" from server "Test Server"; the plugin answered 200.',
      pluginAnswer: { status: 200 },
      outcome: null,
      calls: [
        {
          method: "PATCH",
          // The interaction's token stays out of the answer, like the bot's.
          path: `/api/v10/webhooks/${APP}/<token>/messages/@original`,
          body: { content: "Hello, Test User!" },
          status: 200,
        },
      ],
    });
  });

  it("workspace message: the fake signs an event for the installed team; the handler's thread reply comes back without its bot token", async () => {
    const { user, row } = await userWithProject("ada@example.com", "alpha");
    await claimResource(env.DB, {
      pluginId: "workspace",
      resourceType: "workspace",
      projectId: row.id,
      externalResourceId: DEFAULT_TEAM.id,
      displayName: DEFAULT_TEAM.name,
    });
    const deliveries: Delivery[] = [];
    const background: Promise<unknown>[] = [];
    let botToken = "";
    const slack = createFakeWorkspace({
      clientId: "111.222",
      clientSecret: "client-secret",
      signingSecret: SIGNING_SECRET,
      webhookUrl: "https://workspace-plugin.test/webhook",
      async deliver(request) {
        const body = await request.text();
        const json = JSON.parse(body) as Record<string, any>;
        deliveries.push({ headers: request.headers, body, json });
        const reply = new Request("https://slack.fake/api/chat.postMessage", {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${botToken}` },
          body: JSON.stringify({
            channel: json.event.channel,
            thread_ts: json.event.ts,
            text: `echo: ${json.event.text}`,
          }),
        });
        background.push(new Promise((resolve) => setTimeout(resolve, 100)).then(() => slack.fetch(reply)));
        return new Response(null, { status: 200 });
      },
    });
    botToken = await installSlackTeam(slack);

    const response = await callApi("POST", "/projects/alpha/plugins/workspace/test-events", {
      token: user.token,
      body: { kind: "message", text: "hi" },
      env: apiEnvWith({ FAKE_WORKSPACE: asFetcher((request) => slack.fetch(request)) }),
    });
    const text = await response.text();
    expect(response.status, text).toBe(200);
    await Promise.all(background);
    expect(text).not.toContain(botToken);

    expect(deliveries).toHaveLength(1);
    const [delivery] = deliveries;
    const check = await verifyWorkspaceSignature(
      SIGNING_SECRET,
      delivery!.headers.get("X-Slack-Request-Timestamp"),
      delivery!.headers.get("X-Slack-Signature"),
      delivery!.body,
    );
    expect(check.ok).toBe(true);
    expect(delivery!.json).toMatchObject({
      type: "event_callback",
      team_id: DEFAULT_TEAM.id,
      event: { type: "message", text: "hi" },
    });

    expect(JSON.parse(text)).toEqual({
      sent: {
        kind: "message",
        text: "hi",
        resource: { plugin: "workspace", externalId: DEFAULT_TEAM.id, displayName: "Test Workspace" },
      },
      summary: 'Sent a signed message "hi" from workspace "Test Workspace"; the plugin answered 200.',
      pluginAnswer: { status: 200 },
      outcome: null,
      calls: [
        {
          method: "chat.postMessage",
          params: { channel: delivery!.json.event.channel, thread_ts: delivery!.json.event.ts, text: "echo: hi" },
          status: 200,
          ok: true,
          at: expect.any(Number),
        },
      ],
    });
  });

  it("reports an inline reply, and no calls when the handler made none (after the wait)", async () => {
    const { row } = await installedChatProject();
    const world = chatWorld(() => ({ type: 4, data: { content: "pong" } }));
    const [resource] = (await listProjectResources(env.DB, row.id, "chatserver")).filter(
      (r) => r.external_resource_id === TEST_GUILD.id,
    );
    const answer = await sendTestEvent(
      world.fetcher,
      "chatserver",
      resource!,
      { kind: "command", name: "ping" },
      { maxMs: 300, quietMs: 100, pollMs: 50 },
    );
    expect(answer).toEqual({
      sent: {
        kind: "command",
        name: "ping",
        resource: { plugin: "chatserver", externalId: TEST_GUILD.id, displayName: "Test Server" },
      },
      summary: 'Sent a signed command /ping from server "Test Server"; the plugin answered 200.',
      pluginAnswer: { status: 200, inlineReply: "pong" },
      outcome: null,
      calls: [],
    });
  });
});

/** Installs the fake Slack app on the default team (consent page → Allow → code exchange) and returns the bot token. */
async function installSlackTeam(slack: ReturnType<typeof createFakeWorkspace>): Promise<string> {
  const redirect = "https://workspace-plugin.test/oauth/callback";
  const q = new URLSearchParams({ client_id: "111.222", scope: "chat:write", redirect_uri: redirect, state: "st" });
  const html = await (await slack.fetch(new Request(`https://slack.fake/oauth/v2/authorize?${q}`))).text();
  const fields = Object.fromEntries(
    [...html.matchAll(/name="([^"]+)" value="([^"]*)"/g)].map((m) => [
      m[1]!,
      m[2]!.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n))),
    ]),
  );
  const decision = await slack.fetch(
    new Request("https://slack.fake/oauth/v2/authorize", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ ...fields, decision: "allow" }).toString(),
      redirect: "manual",
    }),
  );
  const code = new URL(decision.headers.get("location")!).searchParams.get("code")!;
  const token = await slack.fetch(
    new Request("https://slack.fake/api/oauth.v2.access", {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${btoa("111.222:client-secret")}`,
      },
      body: new URLSearchParams({ code, redirect_uri: redirect }).toString(),
    }),
  );
  const body = (await token.json()) as { ok: boolean; access_token: string };
  expect(body.ok).toBe(true);
  return body.access_token;
}

describe("test events: what the project's dispatch came to", () => {
  type Recorded = import("#src/runtime/plugins/pluginRoutes.ts").DispatchOutcome;
  const FAST = { maxMs: 400, quietMs: 100, pollMs: 50 };
  const base = { kind: "command", name: "ping", status: 200 };

  it.each([
    [
      "no handler registered",
      { ...base, status: 404, result: "no_handler", message: "This project has no handler for command /ping." },
      false,
      " No handler is registered: This project has no handler for command /ping.",
      { result: "no_handler", message: "This project has no handler for command /ping." },
    ],
    [
      "the handler threw, with its code and message",
      { ...base, status: 429, result: "failed", error: { code: "rate_limited", message: "Too many actions." } },
      false,
      " The handler threw rate_limited: Too many actions.",
      { result: "failed", error: { code: "rate_limited", message: "Too many actions." } },
    ],
    [
      "the handler ran and made a call",
      { ...base, result: "handled" },
      true,
      " The project's handler ran.",
      { result: "handled" },
    ],
    [
      "no answer within the wait (the project can say, but said nothing)",
      null,
      false,
      " The project did not answer the dispatch within 0.4 s (see the `platform dev` terminal).",
      null,
    ],
  ] as const)("%s", async (_name, recorded, calls, sentence, outcome) => {
    const { row } = await installedChatProject();
    // An outcome from before the trigger is not this event's.
    const outcomes: Recorded[] = [{ ...base, seq: 4, result: "failed", error: { code: "old", message: "old" } }];
    const world = chatWorld(
      () => ({ type: 5 }),
      async (payload, fake) => {
        if (calls) {
          const path = `/api/v10/webhooks/${APP}/${payload.token}/messages/@original`;
          await fake.fetch(
            new Request(`https://chat.fake${path}`, {
              method: "PATCH",
              headers: { authorization: `Bot ${BOT_TOKEN}`, "content-type": "application/json" },
              body: JSON.stringify({ content: "pong" }),
            }),
          );
        }
        if (recorded) outcomes.push({ ...recorded, seq: 5 } as Recorded);
      },
    );
    const [resource] = (await listProjectResources(env.DB, row.id, "chatserver")).filter(
      (r) => r.external_resource_id === TEST_GUILD.id,
    );
    const answer = await sendTestEvent(
      world.fetcher,
      "chatserver",
      resource!,
      { kind: "command", name: "ping" },
      FAST,
      async () => [...outcomes],
    );
    await Promise.all(world.background);
    expect(answer.summary).toBe(
      `Sent a signed command /ping from server "Test Server"; the plugin answered 200.${sentence}`,
    );
    expect(answer.outcome).toEqual(outcome);
    expect(answer.calls).toHaveLength(calls ? 1 : 0);
  });

  it("says at once that a workspace event the project does not listen to was not dispatched", async () => {
    const { row } = await userWithProject("ada@example.com", "alpha");
    await claimResource(env.DB, {
      pluginId: "workspace",
      resourceType: "workspace",
      projectId: row.id,
      externalResourceId: DEFAULT_TEAM.id,
      displayName: DEFAULT_TEAM.name,
      metadata: { events: ["mention"] },
    });
    const slack = createFakeWorkspace({
      clientId: "111.222",
      clientSecret: "client-secret",
      signingSecret: SIGNING_SECRET,
      webhookUrl: "https://workspace-plugin.test/webhook",
      deliver: async () => new Response(null, { status: 200 }),
    });
    await installSlackTeam(slack);
    const [resource] = await listProjectResources(env.DB, row.id, "workspace");
    const asked: number[] = [];
    const answer = await sendTestEvent(
      asFetcher((request) => slack.fetch(request)),
      "workspace",
      resource!,
      { kind: "message", text: "hi" },
      { maxMs: 60_000, quietMs: 100, pollMs: 50 },
      async () => {
        asked.push(1);
        return [];
      },
    );
    expect(answer.outcome).toEqual({
      result: "no_handler",
      message: 'The project registers no workspace.onEvent("message") handler, so the plugin did not dispatch it.',
    });
    expect(asked).toHaveLength(1);
  });

  it("the route reads the outcome from the project worker's GET /__plugin/<plugin>, with an internal token", async () => {
    const { user } = await installedChatProject();
    const world = chatWorld(() => ({ type: 5 }));
    const dispatcher = fakeDispatcher((request) => {
      const url = new URL(request.url);
      if (request.method !== "GET" || url.pathname !== "/__plugin/chatserver")
        return new Response("no", { status: 500 });
      const recorded = world.deliveries.length
        ? [{ ...base, seq: 1, status: 429, result: "failed", error: { code: "rate_limited", message: "Slow down." } }]
        : [];
      return Response.json({ outcomes: recorded });
    });
    const response = await callApi("POST", "/projects/alpha/plugins/chatserver/test-events", {
      token: user.token,
      body: { kind: "command", name: "ping" },
      env: { ...apiHarness({ dispatcher }).env, FAKE_CHATSERVER: world.fetcher } as DevApiEnv,
    });
    const body = (await response.json()) as { summary: string; outcome: unknown };
    expect(body.outcome).toEqual({ result: "failed", error: { code: "rate_limited", message: "Slow down." } });
    expect(body.summary).toMatch(/ The handler threw rate_limited: Slow down\.$/);
    expect(dispatcher.calls.every((c) => c.headers.has("x-platform-internal"))).toBe(true);
  });
});

describe("clicks and submits as test events (the chat window's and platform plugin trigger's)", () => {
  async function withMessage() {
    const owner = await installedChatProject();
    // The "plugin" defers the update, then (as a handler would) edits the message the button is on.
    const world = chatWorld(
      () => ({ type: 6 }),
      (payload, fake) =>
        fake.fetch(
          new Request(`https://chat.fake/api/v10/webhooks/${APP}/${payload.token}/messages/@original`, {
            method: "PATCH",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ content: "Approved" }),
          }),
        ),
    );
    world.fake.state().installedGuilds.add(TEST_GUILD.id);
    const posted = await world.fake.fetch(
      new Request(`https://chat.fake/api/v10/channels/${TEST_GUILD.channels[0]}/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bot ${BOT_TOKEN}` },
        body: JSON.stringify({
          content: "Deploy?",
          components: [{ type: 1, components: [{ type: 2, style: 3, label: "Approve", custom_id: "approve:run-1" }] }],
        }),
      }),
    );
    expect(posted.status).toBe(200);
    return { ...owner, world, messageId: ((await posted.json()) as { id: string }).id };
  }

  it("a click reaches the plugin as the component interaction of the message showing it", async () => {
    const { user, world, messageId } = await withMessage();
    const response = await callApi("POST", "/projects/alpha/plugins/chatserver/test-events", {
      token: user.token,
      body: { kind: "component", customId: "approve:run-1", channel: TEST_GUILD.channels[0], message: messageId },
      env: apiEnvWith({ FAKE_CHATSERVER: world.fetcher }),
    });
    expect(response.status, await response.clone().text()).toBe(200);
    const answer = (await response.json()) as { summary: string; sent: Record<string, unknown> };
    expect(answer.summary).toMatch(
      /^Sent a signed component approve:run-1 from server "Test Server"; the plugin answered 200\./,
    );
    expect(world.deliveries[0]!.json).toMatchObject({
      type: 3,
      guild_id: TEST_GUILD.id,
      data: { custom_id: "approve:run-1", component_type: 2 },
      message: { id: messageId },
    });
  });

  it("a click on what no message shows is the developer's input: 400 with the fake's reason, nothing delivered", async () => {
    const { user, world } = await withMessage();
    const error = await expectError(
      await callApi("POST", "/projects/alpha/plugins/chatserver/test-events", {
        token: user.token,
        body: { kind: "component", customId: "approve:run-2" },
        env: apiEnvWith({ FAKE_CHATSERVER: world.fetcher }),
      }),
      400,
      "invalid_input",
    );
    expect(error.error.message).toMatch(/shows a component with custom_id "approve:run-2"/);
    expect(world.deliveries).toHaveLength(0);
  });
});

describe("GET /projects/:slug/plugins/:plugin/chat", () => {
  it("shows the channels of the project's newest claimed server as its member sees them", async () => {
    const { user } = await installedChatProject();
    const world = chatWorld(() => ({ type: 6 }));
    world.fake.state().installedGuilds.add(TEST_GUILD.id);
    world.fake.state().installedGuilds.add(OTHER_GUILD.id);
    for (const guild of [TEST_GUILD, OTHER_GUILD])
      await world.fake.fetch(
        new Request(`https://chat.fake/api/v10/channels/${guild.channels[0]}/messages`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bot ${BOT_TOKEN}` },
          body: JSON.stringify({ content: `hello ${guild.name}` }),
        }),
      );
    const response = await callApi("GET", "/projects/alpha/plugins/chatserver/chat", {
      token: user.token,
      env: apiEnvWith({ FAKE_CHATSERVER: world.fetcher }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const chat = (await response.json()) as any;
    expect(chat).toMatchObject({
      plugin: "chatserver",
      resource: { externalId: TEST_GUILD.id, displayName: "Test Server" },
      forms: [],
    });
    expect(chat.channels).toEqual([
      {
        id: TEST_GUILD.channels[0],
        name: "general",
        messages: [expect.objectContaining({ text: "hello Test Server", author: "platform-bot", bot: true, rows: [] })],
      },
    ]);
  });

  it.each([
    ["another user's project", "bob", 404, "not_found"],
    ["a project without an install", "carol", 409, "conflict"],
  ])("refuses %s", async (_name, who, status, code) => {
    await installedChatProject();
    const bob = await userWithProject("bob@example.com", "beta");
    const carol = await userWithProject("carol@example.com", "gamma");
    const token = who === "bob" ? bob.user.token : carol.user.token;
    const slug = who === "bob" ? "alpha" : "gamma";
    const fake = untouchedFake();
    await expectError(
      await callApi("GET", `/projects/${slug}/plugins/chatserver/chat`, {
        token,
        env: apiEnvWith({ FAKE_CHATSERVER: fake.fetcher }),
      }),
      status,
      code,
    );
    expect(fake.requests).toEqual([]);
  });

  it("exists under platform dev only: the deployed API worker has no such route", async () => {
    const { user } = await installedChatProject();
    const response = await callAnyApi("GET", "/projects/alpha/plugins/chatserver/chat", {
      token: user.token,
      env: apiEnvWith({ FAKE_CHATSERVER: untouchedFake().fetcher }),
    });
    await expectError(response, 404, "not_found");
  });
});
