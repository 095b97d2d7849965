/**
 * The workspace-chat plugin worker against the fake Slack, end to end in
 * workerd: install flow, signed webhooks, dispatch to a project worker built
 * with the real entry wrapper and runtime, proxy calls, token refresh.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createFakeWorkspace, type FakeWorkspace } from "#src/dev/fakes/workspace/fakeWorkspace.ts";
import workspacePlugin from "#src/plugins/workspace/index.ts";
import type { WorkspaceEnv } from "#src/plugins/workspace/env.ts";
import { signWorkspaceRequest } from "#src/plugins/workspace/workspaceSignature.ts";
import { createPlatformWorker } from "#src/runtime/entry/createPlatformWorker.ts";
import { platformRuntime } from "#src/runtime/entry/platformRuntime.ts";
import {
  resetWorkspaceHandlers,
  workspace,
  type WorkspaceEvent,
  type WorkspaceViewSubmission,
} from "#src/runtime/plugins/workspace.ts";
import type { ProjectRow } from "#src/workers/db/projectsTable.ts";
import {
  apiHarness,
  callApi,
  expectError,
  fakeDispatcher,
  userWithProject,
  type FakeDispatcher,
  type ProjectWorkerHandler,
  type TestUser,
} from "#test/support/workerd/index.ts";
import { pluginEnv, signedRequest } from "#test/support/workerd/index.ts";

const PLUGIN_ORIGIN = "https://workspace.test";
const SLACK_ORIGIN = "https://slack.fake";
const CLIENT_ID = "111.222";
const CLIENT_SECRET = "fake-client-secret";
const SIGNING_SECRET = "fake-signing-secret-for-tests";

interface Setup {
  slack: FakeWorkspace;
  env: WorkspaceEnv;
  dispatcher: FakeDispatcher;
  /** Calls the plugin worker; its waitUntil work is collected for `settle`. */
  callPlugin(request: Request): Promise<Response>;
  /** Waits for every waitUntil of every plugin call so far. */
  settle(): Promise<void>;
  /** Requests the plugin sent to Slack. */
  slackRequests: { path: string; body: string }[];
  trigger(params: Record<string, unknown>): Promise<{ status: number; json: any }>;
}

function setup(options: { tokenRotation?: boolean; expiresIn?: number; project?: ProjectWorkerHandler } = {}): Setup {
  const pending: Promise<void>[] = [];
  const slackRequests: { path: string; body: string }[] = [];
  const dispatcher = fakeDispatcher(options.project ?? (() => Response.json({ handled: 1 })));
  let wsEnv: WorkspaceEnv;
  const callPlugin = async (request: Request) => {
    const ctx = createExecutionContext();
    const response = await workspacePlugin.fetch(request, wsEnv, ctx);
    pending.push(waitOnExecutionContext(ctx));
    return response;
  };
  const slack = createFakeWorkspace({
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    signingSecret: SIGNING_SECRET,
    webhookUrl: `${PLUGIN_ORIGIN}/webhook`,
    redirectUris: [`${PLUGIN_ORIGIN}/oauth/callback`],
    tokenRotation: options.tokenRotation,
    expiresIn: options.expiresIn,
    deliver: callPlugin,
  });
  wsEnv = pluginEnv({
    SLACK_BASE_URL: SLACK_ORIGIN,
    SLACK_CLIENT_ID: CLIENT_ID,
    SLACK_CLIENT_SECRET: CLIENT_SECRET,
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    WORKSPACE_PUBLIC_URL: PLUGIN_ORIGIN,
    DISPATCHER: dispatcher.namespace,
    SLACK: {
      async fetch(input: RequestInfo | URL, init?: RequestInit) {
        const request = new Request(input, init);
        slackRequests.push({ path: new URL(request.url).pathname, body: await request.clone().text() });
        return slack.fetch(request);
      },
    },
  }) as WorkspaceEnv;
  return {
    slack,
    env: wsEnv,
    dispatcher,
    callPlugin,
    slackRequests,
    async settle() {
      while (pending.length) await Promise.all(pending.splice(0));
    },
    async trigger(params) {
      const response = await slack.fetch(
        new Request(`${SLACK_ORIGIN}/__fake/trigger`, {
          method: "POST",
          body: JSON.stringify(params),
          headers: { "content-type": "application/json" },
        }),
      );
      return { status: response.status, json: await response.json() };
    },
  };
}

// ---------------------------------------------------------------------------
// Install flow helpers
// ---------------------------------------------------------------------------

async function installUrl(user: TestUser, slug: string): Promise<string> {
  const harness = apiHarness({ env: { WORKSPACE_PLUGIN_URL: PLUGIN_ORIGIN } as never });
  const response = await callApi("POST", "/oauth/session", {
    token: user.token,
    body: { project: slug, plugin: "workspace" },
    env: harness.env,
  });
  expect(response.status, await response.clone().text()).toBe(201);
  return ((await response.json()) as { installUrl: string }).installUrl;
}

/** /install → Slack's consent page → Allow/Cancel: the callback URL Slack redirects to, and the install cookie. */
async function consent(
  t: Setup,
  url: string,
  decision: "allow" | "cancel" = "allow",
  team?: string,
): Promise<{ callback: string; cookie: string }> {
  const start = await t.callPlugin(new Request(url));
  expect(start.status, await start.clone().text()).toBe(302);
  const cookie = start.headers.get("set-cookie")!.split(";")[0]!;
  const authorize = new URL(start.headers.get("location")!);
  expect(authorize.origin + authorize.pathname).toBe(`${SLACK_ORIGIN}/oauth/v2/authorize`);
  expect(authorize.searchParams.get("redirect_uri")).toBe(`${PLUGIN_ORIGIN}/oauth/callback`);
  if (team) authorize.searchParams.set("team", team);
  const page = await t.slack.fetch(new Request(authorize));
  expect(page.status).toBe(200);
  const html = await page.text();
  const fields = Object.fromEntries(
    [...html.matchAll(/name="([^"]+)" value="([^"]*)"/g)].map((m) => [
      m[1]!,
      m[2]!.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n))),
    ]),
  );
  const decided = await t.slack.fetch(
    new Request(`${SLACK_ORIGIN}/oauth/v2/authorize`, {
      method: "POST",
      body: new URLSearchParams({ ...fields, decision }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" },
      redirect: "manual",
    }),
  );
  expect(decided.status).toBe(302);
  return { callback: decided.headers.get("location")!, cookie };
}

async function install(t: Setup, user: TestUser, slug: string, team?: string): Promise<Response> {
  const { callback, cookie } = await consent(t, await installUrl(user, slug), "allow", team);
  return t.callPlugin(new Request(callback, { headers: { cookie } }));
}

async function installedProject(
  t: Setup,
  email: string,
  slug: string,
  team?: string,
): Promise<{ user: TestUser; row: ProjectRow }> {
  // Private projects are not rate limited, so tests can make as many proxy calls as they need.
  const { user, row } = await userWithProject(email, slug, { private: true });
  const page = await install(t, user, slug, team);
  expect(page.status, await page.clone().text()).toBe(200);
  return { user, row };
}

async function proxy(t: Setup, row: ProjectRow, route: string, body: Record<string, unknown>): Promise<Response> {
  return t.callPlugin(
    await signedRequest({ project: row, path: `/proxy/${route}`, body: JSON.stringify(body), origin: PLUGIN_ORIGIN }),
  );
}

async function signedWebhook(
  body: string,
  options: { secret?: string; ts?: number; signature?: string | null; timestamp?: string | null } = {},
): Promise<Request> {
  const ts = String(options.ts ?? Math.floor(Date.now() / 1000));
  const headers: Record<string, string> = { "content-type": "application/json" };
  const signature =
    options.signature === undefined
      ? await signWorkspaceRequest(options.secret ?? SIGNING_SECRET, ts, body)
      : options.signature;
  if (signature !== null) headers["X-Slack-Signature"] = signature;
  const timestamp = options.timestamp === undefined ? ts : options.timestamp;
  if (timestamp !== null) headers["X-Slack-Request-Timestamp"] = timestamp;
  return new Request(`${PLUGIN_ORIGIN}/webhook`, { method: "POST", headers, body });
}

const pluginDispatches = (t: Setup) => t.dispatcher.calls.filter((c) => c.url.pathname === "/__plugin/workspace");

// ---------------------------------------------------------------------------

describe("install flow with the fake Slack", () => {
  it("connects the team: bot token sealed in the resource metadata, connection stored", async () => {
    const t = setup();
    const { user } = await userWithProject("ada@example.com", "ada-app");
    const page = await install(t, user, "ada-app");
    const html = await page.text();
    expect(page.status, html).toBe(200);
    expect(html).toContain("Test Workspace is now connected to project ada-app");
    const resource = await env.DB.prepare("SELECT * FROM plugin_resources WHERE plugin_id = 'workspace'").first<
      Record<string, any>
    >();
    expect(resource).toMatchObject({
      resource_type: "workspace",
      external_resource_id: "T0TEST",
      display_name: "Test Workspace",
    });
    const metadata = JSON.parse(resource!.metadata);
    expect(metadata.botToken).toMatch(/^v1\./);
    expect(resource!.metadata).not.toContain("xoxb");
    expect(metadata.botUserId).toBe("U0BOT0TEST");
    const connection = await env.DB.prepare(
      "SELECT * FROM plugin_oauth_connections WHERE plugin_id = 'workspace'",
    ).first<Record<string, any>>();
    expect(connection).toMatchObject({
      external_user_id: "T0TEST",
      refresh_token: null,
      token_expires_at: null,
      revoked_at: null,
    });
    expect(connection!.access_token).not.toContain("xoxb");
    // The code exchange used client auth and the registered redirect URI.
    const exchange = t.slackRequests.find((r) => r.path === "/api/oauth.v2.access")!;
    expect(new URLSearchParams(exchange.body).get("redirect_uri")).toBe(`${PLUGIN_ORIGIN}/oauth/callback`);
  });

  it("with token rotation, stores the refresh token and the expiry in the connection", async () => {
    const t = setup({ tokenRotation: true, expiresIn: 43_200 });
    const before = Date.now();
    await installedProject(t, "ada@example.com", "ada-app");
    const connection = await env.DB.prepare(
      "SELECT * FROM plugin_oauth_connections WHERE plugin_id = 'workspace'",
    ).first<Record<string, any>>();
    expect(connection!.refresh_token).toMatch(/^v1\./);
    expect(connection!.token_expires_at).toBeGreaterThanOrEqual(before + 43_200_000);
  });

  it("an install link works once", async () => {
    const t = setup();
    const { user } = await userWithProject("ada@example.com", "ada-app");
    const url = await installUrl(user, "ada-app");
    expect((await t.callPlugin(new Request(url))).status).toBe(302);
    const again = await t.callPlugin(new Request(url));
    expect(again.status).toBe(410);
    expect(await again.text()).toContain("already used");
    const unknown = await t.callPlugin(new Request(`${PLUGIN_ORIGIN}/install?code=${"ab".repeat(32)}`));
    expect(unknown.status).toBe(404);
  });

  it("an unconfigured plugin refuses the install link without using it up", async () => {
    const t = setup();
    const { user } = await userWithProject("ada@example.com", "ada-app");
    const url = await installUrl(user, "ada-app");
    const unconfigured = await workspacePlugin.fetch(
      new Request(url),
      { ...t.env, SLACK_CLIENT_SECRET: "" },
      createExecutionContext(),
    );
    expect(unconfigured.status).toBe(503);
    expect(await unconfigured.text()).toContain("not configured");
    expect((await t.callPlugin(new Request(url))).status).toBe(302);
  });

  it("Slack's code is exchanged once: replaying the callback fails at Slack and changes nothing", async () => {
    const t = setup();
    const { user } = await userWithProject("ada@example.com", "ada-app");
    const { callback, cookie } = await consent(t, await installUrl(user, "ada-app"));
    expect((await t.callPlugin(new Request(callback, { headers: { cookie } }))).status).toBe(200);
    const replay = await t.callPlugin(new Request(callback, { headers: { cookie } }));
    expect(replay.status).toBe(502);
    expect(await replay.text()).toContain("invalid_code");
  });

  it("refuses a bad state, an expired-looking state, and a callback from another browser", async () => {
    const t = setup();
    const { user } = await userWithProject("ada@example.com", "ada-app");
    const { callback, cookie } = await consent(t, await installUrl(user, "ada-app"));
    const tampered = new URL(callback);
    const state = tampered.searchParams.get("state")!;
    tampered.searchParams.set("state", state.slice(0, -2) + (state.endsWith("A") ? "BB" : "AA"));
    const bad = await t.callPlugin(new Request(tampered, { headers: { cookie } }));
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("not valid");
    const missing = new URL(callback);
    missing.searchParams.delete("state");
    expect((await t.callPlugin(new Request(missing, { headers: { cookie } }))).status).toBe(400);
    const otherBrowser = await t.callPlugin(new Request(callback));
    expect(otherBrowser.status).toBe(400);
    expect(await otherBrowser.text()).toContain("another browser");
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM plugin_oauth_connections").first("n")).toBe(0);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM plugin_resources").first("n")).toBe(0);
  });

  it("Cancel at Slack connects nothing", async () => {
    const t = setup();
    const { user } = await userWithProject("ada@example.com", "ada-app");
    const { callback, cookie } = await consent(t, await installUrl(user, "ada-app"), "cancel");
    const page = await t.callPlugin(new Request(callback, { headers: { cookie } }));
    expect(page.status).toBe(400);
    expect(await page.text()).toContain("cancelled");
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM plugin_oauth_connections").first("n")).toBe(0);
  });

  it("a team claimed by another project is refused with a 409 page; the owner keeps it; the same project may reinstall", async () => {
    const t = setup();
    const first = await installedProject(t, "ada@example.com", "ada-app");
    const { user: bob } = await userWithProject("bob@example.com", "bob-app");
    const refused = await install(t, bob, "bob-app");
    expect(refused.status).toBe(409);
    const refusal = await refused.text();
    expect(refusal).toContain("already connected to another project");
    expect(refusal).toContain("platform plugin uninstall workspace");
    const owner = await env.DB.prepare(
      "SELECT project_id FROM plugin_resources WHERE external_resource_id = 'T0TEST'",
    ).first("project_id");
    expect(owner).toBe(first.row.id);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM plugin_oauth_connections").first("n")).toBe(1);
    // Bob can connect another workspace; Ada can reinstall hers.
    expect((await install(t, bob, "bob-app", "T0OTHER")).status).toBe(200);
    expect((await install(t, first.user, "ada-app")).status).toBe(200);
  });
});

describe("webhook: signature and body checks", () => {
  const challengeBody = JSON.stringify({ token: "x", challenge: "c-123", type: "url_verification" });

  it("url_verification from the fake echoes the challenge", async () => {
    const t = setup();
    const { json } = await t.trigger({ kind: "url_verification" });
    expect(json.response.status).toBe(200);
    expect(json.response.body).toBe(json.delivered.challenge);
    expect(json.response.contentType).toMatch(/^text\/plain/);
  });

  const cases: [string, () => Promise<Request>, number, string][] = [
    ["forged (wrong secret)", () => signedWebhook(challengeBody, { secret: "not-the-secret" }), 401, "bad_signature"],
    [
      "stale (6 minutes old)",
      () => signedWebhook(challengeBody, { ts: Math.floor(Date.now() / 1000) - 360 }),
      401,
      "stale",
    ],
    [
      "replayed outside the window (1 hour later)",
      () => signedWebhook(challengeBody, { ts: Math.floor(Date.now() / 1000) - 3600 }),
      401,
      "stale",
    ],
    ["unsigned", () => signedWebhook(challengeBody, { signature: null, timestamp: null }), 401, "missing"],
    ["signature without timestamp", () => signedWebhook(challengeBody, { timestamp: null }), 401, "missing"],
    ["malformed signature", () => signedWebhook(challengeBody, { signature: "v0=xyz" }), 401, "malformed"],
    [
      "body changed after signing",
      async () => {
        const good = await signedWebhook(challengeBody);
        return new Request(good.url, {
          method: "POST",
          headers: good.headers,
          body: challengeBody.replace("c-123", "c-124"),
        });
      },
      401,
      "bad_signature",
    ],
  ];
  it.each(cases)("%s is refused", async (_name, make, status, reason) => {
    const t = setup();
    const response = await t.callPlugin(await make());
    const body = await expectError(response, status, "unauthorized");
    expect(body.error.message).toContain(reason);
    await t.settle();
    expect(t.dispatcher.calls).toHaveLength(0);
  });

  it("without a configured signing secret every delivery is refused (503), none accepted", async () => {
    const t = setup();
    const response = await workspacePlugin.fetch(
      await signedWebhook(challengeBody),
      { ...t.env, SLACK_SIGNING_SECRET: "" },
      createExecutionContext(),
    );
    await expectError(response, 503, "not_ready");
  });

  it("a signed body that is not JSON → 400", async () => {
    const t = setup();
    await expectError(await t.callPlugin(await signedWebhook("token=x&challenge=y")), 400, "malformed_json");
  });

  it("an oversized body (> 1 MB, declared or streamed) → 413 before any signature work", async () => {
    const t = setup();
    const big = JSON.stringify({ type: "url_verification", challenge: "x".repeat(1024 * 1024) });
    await expectError(await t.callPlugin(await signedWebhook(big)), 413, "payload_too_large");
    const signed = await signedWebhook(big);
    const stream = new Blob([big]).stream();
    await expectError(
      await t.callPlugin(new Request(signed.url, { method: "POST", headers: signed.headers, body: stream })),
      413,
      "payload_too_large",
    );
  });

  it("an event_callback without event_id or team → 400", async () => {
    const t = setup();
    await expectError(
      await t.callPlugin(await signedWebhook(JSON.stringify({ type: "event_callback", event: { type: "message" } }))),
      400,
      "invalid_input",
    );
  });
});

describe("webhook: events", () => {
  it("a message reaches the project once, even when Slack retries it", async () => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    const first = await t.trigger({ kind: "message", teamId: "T0TEST", text: "hello bot" });
    expect(first.json.response.status).toBe(200);
    await t.settle();
    const retry = await t.trigger({ retry: 1 });
    expect(retry.json.response.status).toBe(200);
    const retry2 = await t.trigger({ retry: 2 });
    expect(retry2.json.response.status).toBe(200);
    await t.settle();
    const calls = pluginDispatches(t);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.scriptName).toBe(row.script_name);
    const payload = JSON.parse(calls[0]!.body);
    expect(payload).toMatchObject({
      kind: "event",
      name: "message",
      project: { slug: "ada-app" },
      user: { id: "U0ALICE" },
      event: {
        type: "message",
        text: "hello bot",
        channel: "C0GENERAL",
        teamId: "T0TEST",
        eventId: first.json.delivered.event_id,
      },
    });
    expect(typeof payload.resource).toBe("string");
    // Internal ids stay inside the platform.
    expect(JSON.stringify(payload.project)).not.toContain(String(row.id));
  });

  it("mentions and reactions are dispatched with their names", async () => {
    const t = setup();
    await installedProject(t, "ada@example.com", "ada-app");
    await t.trigger({ kind: "mention", teamId: "T0TEST", text: "help" });
    await t.trigger({ kind: "reaction", teamId: "T0TEST", text: "tada" });
    await t.settle();
    const payloads = pluginDispatches(t).map((c) => JSON.parse(c.body));
    expect(payloads.map((p) => p.name)).toEqual(["mention", "reaction"]);
    expect(payloads[0].event.text).toBe("<@U0BOT0TEST> help");
    expect(payloads[1].event).toMatchObject({ reaction: "tada", item: { channel: "C0GENERAL" } });
  });

  it("an event of a team no project claimed → 404 with a clear message, nothing dispatched", async () => {
    const t = setup();
    await installedProject(t, "ada@example.com", "ada-app");
    const { json } = await t.trigger({ kind: "message", teamId: "T0NOBODY" });
    expect(json.response.status).toBe(404);
    expect(JSON.parse(json.response.body).error.message).toContain("T0NOBODY is not connected to any project");
    await t.settle();
    expect(pluginDispatches(t)).toHaveLength(0);
  });

  it("when the project fails (5xx) the event is released, so Slack's retry is delivered", async () => {
    let failures = 1;
    const t = setup({
      project: () => (failures-- > 0 ? new Response("boom", { status: 500 }) : Response.json({ handled: 1 })),
    });
    await installedProject(t, "ada@example.com", "ada-app");
    await t.trigger({ kind: "message", teamId: "T0TEST" });
    await t.settle();
    await t.trigger({ retry: 1 });
    await t.settle();
    await t.trigger({ retry: 2 });
    await t.settle();
    expect(pluginDispatches(t)).toHaveLength(2);
  });

  it("app_uninstalled marks the connection revoked: proxy calls then fail with a clear 409 revoked", async () => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    expect((await proxy(t, row, "send-message", { channel: "C0GENERAL", text: "before" })).status).toBe(200);
    const { json } = await t.trigger({ kind: "app_uninstalled", teamId: "T0TEST" });
    expect(json.response.status).toBe(200);
    await t.settle();
    expect(pluginDispatches(t)).toHaveLength(0);
    const revokedAt = await env.DB.prepare("SELECT revoked_at FROM plugin_oauth_connections WHERE project_id = ?")
      .bind(row.id)
      .first("revoked_at");
    expect(revokedAt).toBeTypeOf("number");
    const before = t.slackRequests.length;
    const body = await expectError(
      await proxy(t, row, "send-message", { channel: "C0GENERAL", text: "after" }),
      409,
      "revoked",
    );
    expect(body.error.message).toContain("platform plugin install workspace");
    expect(t.slackRequests.length).toBe(before); // refused without calling Slack
  });

  it("tokens_revoked naming our bot does the same", async () => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    await t.trigger({ kind: "tokens_revoked", teamId: "T0TEST" });
    await expectError(
      await proxy(t, row, "add-reaction", { channel: "C0GENERAL", ts: "1.000001", name: "tada" }),
      409,
      "revoked",
    );
  });
});

describe("proxy routes", () => {
  it("send, thread reply, edit and react reach the fake Slack with the workspace's bot token", async () => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    const sent = await proxy(t, row, "send-message", { channel: "C0GENERAL", text: "parent" });
    expect(sent.status, await sent.clone().text()).toBe(200);
    const { channel, ts } = (await sent.json()) as { channel: string; ts: string };
    expect(channel).toBe("C0GENERAL");
    const reply = await proxy(t, row, "thread-reply", { channel, threadTs: ts, text: "in thread" });
    expect(await reply.json()).toMatchObject({ channel, threadTs: ts });
    expect((await proxy(t, row, "edit-message", { channel, ts, text: "edited" })).status).toBe(200);
    expect(await (await proxy(t, row, "add-reaction", { channel, ts, name: ":tada:" })).json()).toEqual({ ok: true });
    // Adding the same reaction again is a success (Slack's already_reacted).
    expect((await proxy(t, row, "add-reaction", { channel, ts, name: "tada" })).status).toBe(200);
    const calls = t.slack.recorded;
    expect(calls.map((c) => c.method)).toEqual([
      "chat.postMessage",
      "chat.postMessage",
      "chat.update",
      "reactions.add",
      "reactions.add",
    ]);
    expect(calls[1]!.params).toMatchObject({ channel, thread_ts: ts, text: "in thread" });
    expect(calls.every((c) => c.token?.startsWith("xoxb-T0TEST-"))).toBe(true);
  });

  it("refuses calls without a valid identity token, and bad input before calling Slack", async () => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    await expectError(
      await t.callPlugin(
        new Request(`${PLUGIN_ORIGIN}/proxy/send-message`, {
          method: "POST",
          body: JSON.stringify({ channel: "C0GENERAL", text: "x" }),
        }),
      ),
      401,
      "unauthorized",
    );
    await expectError(
      await t.callPlugin(
        await signedRequest({
          project: row,
          path: "/proxy/send-message",
          body: '{"channel":"C0GENERAL","text":"x"}',
          secret: "ff".repeat(32),
          origin: PLUGIN_ORIGIN,
        }),
      ),
      401,
      "unauthorized",
    );
    await expectError(await proxy(t, row, "send-message", { channel: "general", text: "x" }), 400, "invalid_input");
    await expectError(await proxy(t, row, "send-message", { channel: "C0GENERAL", text: "" }), 400, "invalid_input");
    await expectError(await proxy(t, row, "thread-reply", { channel: "C0GENERAL", text: "x" }), 400, "invalid_input");
    await expectError(await proxy(t, row, "nope", {}), 404, "not_found");
    expect(t.slack.recorded).toHaveLength(0);
  });

  it("a project with no workspace connected gets a clear 404", async () => {
    const t = setup();
    const { row } = await userWithProject("ada@example.com", "ada-app", { private: true });
    const body = await expectError(
      await proxy(t, row, "send-message", { channel: "C0GENERAL", text: "x" }),
      404,
      "not_found",
    );
    expect(body.error.message).toContain("platform plugin install workspace");
  });

  it("maps Slack's ok:false: channel_not_found → 502 upstream_error naming it; token_revoked / invalid_auth → 409 revoked", async () => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    const missing = await expectError(
      await proxy(t, row, "send-message", { channel: "C0MISSING", text: "x" }),
      502,
      "upstream_error",
    );
    expect(missing.error.message).toContain("channel_not_found");
    expect((missing.error as any).details).toMatchObject({ provider: "slack", providerError: "channel_not_found" });
    const notFound = await expectError(
      await proxy(t, row, "edit-message", { channel: "C0GENERAL", ts: "1.000001", text: "x" }),
      502,
      "upstream_error",
    );
    expect(notFound.error.message).toContain("message_not_found");

    await t.slack.fetch(
      new Request(`${SLACK_ORIGIN}/__fake/revoke`, {
        method: "POST",
        body: JSON.stringify({ teamId: "T0TEST" }),
        headers: { "content-type": "application/json" },
      }),
    );
    const revoked = await expectError(
      await proxy(t, row, "send-message", { channel: "C0GENERAL", text: "x" }),
      409,
      "revoked",
    );
    expect(revoked.error.message).toContain("token_revoked");
    expect(revoked.error.message).toContain("reconnect");

    // invalid_auth: the stored token is one Slack does not know.
    const t2 = setup();
    const other = await installedProject(t2, "bob@example.com", "bob-app", "T0OTHER");
    await t2.slack.fetch(new Request(`${SLACK_ORIGIN}/__fake/reset`, { method: "POST" }));
    const invalid = await expectError(
      await proxy(t2, other.row, "send-message", { channel: "C0GENERAL", text: "x" }),
      409,
      "revoked",
    );
    expect(invalid.error.message).toContain("invalid_auth");
  });

  it("Slack's 429 becomes our 429 with Slack's Retry-After", async () => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    await t.slack.fetch(
      new Request(`${SLACK_ORIGIN}/__fake/ratelimit`, {
        method: "POST",
        body: JSON.stringify({ retryAfter: 17, count: 1 }),
        headers: { "content-type": "application/json" },
      }),
    );
    const limited = await proxy(t, row, "send-message", { channel: "C0GENERAL", text: "x" });
    expect(limited.headers.get("retry-after")).toBe("17");
    const body = await expectError(limited, 429, "rate_limited");
    expect(body.error.message).toContain("Slack is rate limiting");
    expect((await proxy(t, row, "send-message", { channel: "C0GENERAL", text: "x" })).status).toBe(200);
  });

  it("the project's own rate limit applies (public project: 3 actions per minute)", async () => {
    const t = setup();
    const { user } = await userWithProject("ada@example.com", "busy-app");
    expect((await install(t, user, "busy-app")).status).toBe(200);
    const row = (await env.DB.prepare("SELECT * FROM projects WHERE slug = 'busy-app'").first<ProjectRow>())!;
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await proxy(t, row, "send-message", { channel: "C0GENERAL", text: `n${i}` })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(t.slack.recorded).toHaveLength(3);
  });
});

describe("token refresh", () => {
  async function expire(row: ProjectRow) {
    await env.DB.prepare("UPDATE plugin_oauth_connections SET token_expires_at = ? WHERE project_id = ?")
      .bind(Date.now() - 1000, row.id)
      .run();
  }

  it("an expired token is refreshed before the call; the new one is stored sealed", async () => {
    const t = setup({ tokenRotation: true });
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    const sealedBefore = await env.DB.prepare("SELECT metadata FROM plugin_resources").first<string>("metadata");
    await expire(row);
    expect((await proxy(t, row, "send-message", { channel: "C0GENERAL", text: "x" })).status).toBe(200);
    const refreshes = t.slackRequests.filter(
      (r) => r.path === "/api/oauth.v2.access" && r.body.includes("grant_type=refresh_token"),
    );
    expect(refreshes).toHaveLength(1);
    const metadata = await env.DB.prepare("SELECT metadata FROM plugin_resources").first<string>("metadata");
    expect(metadata).not.toBe(sealedBefore);
    expect(metadata).not.toContain("refreshLease");
    const expiresAt = await env.DB.prepare("SELECT token_expires_at FROM plugin_oauth_connections").first<number>(
      "token_expires_at",
    );
    expect(expiresAt).toBeGreaterThan(Date.now() + 40_000_000);
    // The fake saw the call made with the refreshed token (the install one is a different token).
    const [first] = t.slack.recorded;
    expect(first!.ok).toBe(true);
  });

  it("two concurrent calls with an expired token refresh once; both succeed", async () => {
    const t = setup({ tokenRotation: true });
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    await expire(row);
    const responses = await Promise.all([
      proxy(t, row, "send-message", { channel: "C0GENERAL", text: "one" }),
      proxy(t, row, "send-message", { channel: "C0GENERAL", text: "two" }),
      proxy(t, row, "send-message", { channel: "C0RANDOM", text: "three" }),
    ]);
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200]);
    const refreshes = t.slackRequests.filter(
      (r) => r.path === "/api/oauth.v2.access" && r.body.includes("grant_type=refresh_token"),
    );
    expect(refreshes).toHaveLength(1);
    const tokens = new Set(t.slack.recorded.map((c) => c.token));
    expect(tokens.size).toBe(1);
  });

  it("a refresh Slack refuses (refresh token already used elsewhere) marks the connection for reinstall", async () => {
    const t = setup({ tokenRotation: true });
    const { row, user } = await installedProject(t, "ada@example.com", "ada-app");
    await t.slack.fetch(
      new Request(`${SLACK_ORIGIN}/__fake/revoke`, {
        method: "POST",
        body: JSON.stringify({ teamId: "T0TEST" }),
        headers: { "content-type": "application/json" },
      }),
    );
    await expire(row);
    const body = await expectError(
      await proxy(t, row, "send-message", { channel: "C0GENERAL", text: "x" }),
      409,
      "revoked",
    );
    expect(body.error.message).toContain("invalid_refresh_token");
    const metadata = await env.DB.prepare("SELECT metadata FROM plugin_resources").first<string>("metadata");
    expect(metadata).not.toContain("refreshLease");
    // Not "revoked" (the app was not uninstalled): the connection needs a reconnect, with Slack's error.
    expect((await pluginsOf(t, user, "ada-app")).connections).toMatchObject([
      { status: "needs_reconnect", lastError: "invalid_refresh_token", revoked: false },
    ]);
  });

  it("an install whose token expires in 2 s is refreshed by the next sendMessage, which succeeds", async () => {
    const t = setup({ tokenRotation: true, expiresIn: 2 });
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    const response = await proxy(t, row, "send-message", { channel: "C0GENERAL", text: "after rotation" });
    expect(response.status, await response.clone().text()).toBe(200);
    const refreshes = t.slackRequests.filter((r) => r.body.includes("grant_type=refresh_token"));
    expect(refreshes).toHaveLength(1);
    const post = t.slack.recorded.find((c) => c.method === "chat.postMessage")!;
    expect(post).toMatchObject({ ok: true, params: { text: "after rotation" } });
  });

  it("a refresh the provider refuses (the fake's switch) shows needs_reconnect with its error; a reinstall makes it active", async () => {
    const t = setup({ tokenRotation: true, expiresIn: 2 });
    const { row, user } = await installedProject(t, "ada@example.com", "ada-app");
    await t.slack.fetch(
      new Request(`${SLACK_ORIGIN}/__fake/refuse-refresh`, {
        method: "POST",
        body: JSON.stringify({ error: "invalid_refresh_token" }),
        headers: { "content-type": "application/json" },
      }),
    );
    const body = await expectError(
      await proxy(t, row, "send-message", { channel: "C0GENERAL", text: "x" }),
      409,
      "revoked",
    );
    expect(body.error.message).toBe(
      "The workspace-chat connection could not refresh its Slack token (Slack said invalid_refresh_token): it needs to be reconnected. Reinstall it with `platform plugin install workspace`.",
    );
    expect((await pluginsOf(t, user, "ada-app")).connections).toMatchObject([
      { status: "needs_reconnect", lastError: "invalid_refresh_token" },
    ]);
    expect((await install(t, user, "ada-app")).status).toBe(200);
    expect((await pluginsOf(t, user, "ada-app")).connections).toMatchObject([{ status: "active", lastError: null }]);
  });
});

describe("runtime: workspace.onEvent and proxy calls from a real project worker", () => {
  it("a mention reaches the handler once; its thread reply reaches the fake Slack in the right thread", async () => {
    resetWorkspaceHandlers();
    const seen: WorkspaceEvent[] = [];
    workspace.onEvent("mention", async (event, context) => {
      seen.push(event);
      expect(context.project.slug).toBe("ada-app");
      await workspace.threadReply(event.channel!, event.ts!, `Hi <@${event.user}>!`, { resource: context.resource });
    });
    const worker = createPlatformWorker({ fetch: () => new Response("project home") });
    let t!: Setup;
    let projectEnv: Record<string, unknown> = {};
    t = setup({
      project: (request) =>
        worker.fetch!(request as never, projectEnv as never, createExecutionContext()) as Promise<Response>,
    });
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    projectEnv = {
      PLATFORM_WORKER_SECRET: row.worker_secret,
      PLATFORM_PROJECT_ID: String(row.id),
      PLATFORM_PROJECT_SLUG: row.slug,
      WORKSPACE_PLUGIN: {
        fetch: (input: RequestInfo | URL, init?: RequestInit) => t.callPlugin(new Request(input, init)),
      },
    };
    const { json } = await t.trigger({ kind: "mention", teamId: "T0TEST", text: "hello" });
    expect(json.response.status).toBe(200);
    await t.settle();
    await t.trigger({ retry: 1 });
    await t.settle();
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      type: "mention",
      text: "<@U0BOT0TEST> hello",
      user: "U0ALICE",
      channel: "C0GENERAL",
    });
    const posts = t.slack.recorded.filter((c) => c.method === "chat.postMessage");
    expect(posts).toHaveLength(1);
    expect(posts[0]!.ok).toBe(true);
    expect(posts[0]!.params).toMatchObject({
      channel: "C0GENERAL",
      thread_ts: json.delivered.event.ts,
      text: "Hi <@U0ALICE>!",
    });
    resetWorkspaceHandlers();
  });

  it("onAction gets the click; openView opens a modal; onViewSubmission gets its fields; editMessage with blocks and sendEphemeral reach the workspace", async () => {
    resetWorkspaceHandlers();
    const submissions: WorkspaceViewSubmission[] = [];
    workspace.onAction("reject", async (action) => {
      await workspace.openView(action, {
        type: "modal",
        callback_id: `why:${action.actionId.split(":")[1]}`,
        private_metadata: `${action.channel} ${action.messageTs}`,
        title: { type: "plain_text", text: "Why reject?" },
        submit: { type: "plain_text", text: "Reject" },
        blocks: [
          {
            type: "input",
            block_id: "b",
            label: { type: "plain_text", text: "Reason" },
            element: { type: "plain_text_input", action_id: "reason" },
          },
        ],
      });
    });
    workspace.onViewSubmission("why", async (submission) => {
      submissions.push(submission);
      const [channel, ts] = submission.privateMetadata.split(" ");
      await workspace.editMessage(channel!, ts!, `Rejected: ${submission.fields.reason}`, {
        blocks: [{ type: "section", text: { type: "mrkdwn", text: `Rejected by <@${submission.user.id}>` } }],
      });
      await workspace.sendEphemeral(channel!, submission.user.id, "Thanks, noted.");
    });
    const worker = createPlatformWorker({ fetch: () => new Response("project home") });
    let projectEnv: Record<string, unknown> = {};
    const t: Setup = setup({
      project: (request) =>
        worker.fetch!(request as never, projectEnv as never, createExecutionContext()) as Promise<Response>,
    });
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    projectEnv = {
      PLATFORM_WORKER_SECRET: row.worker_secret,
      PLATFORM_PROJECT_ID: String(row.id),
      PLATFORM_PROJECT_SLUG: row.slug,
      WORKSPACE_PLUGIN: {
        fetch: (input: RequestInfo | URL, init?: RequestInit) => t.callPlugin(new Request(input, init)),
      },
    };
    const posted = await workspace.sendMessage("C0GENERAL", "Deploy?", {
      env: projectEnv,
      blocks: [
        {
          type: "actions",
          elements: [{ type: "button", action_id: "reject:run-3", text: { type: "plain_text", text: "Reject" } }],
        },
      ],
    });
    await t.trigger({ kind: "action", actionId: "reject:run-3" });
    await t.settle();
    expect(t.slack.recorded.find((c) => c.method === "views.open")).toMatchObject({ ok: true });
    await t.trigger({ kind: "view", callbackId: "why:run-3", fields: { reason: "Friday" } });
    await t.settle();
    expect(submissions).toHaveLength(1);
    expect(submissions[0]).toMatchObject({
      callbackId: "why:run-3",
      fields: { reason: "Friday" },
      user: { id: "U0ALICE" },
    });
    const chat = (await (
      await t.slack.fetch(new Request(`${SLACK_ORIGIN}/__fake/chat?resourceId=T0TEST`))
    ).json()) as any;
    expect(chat.channels[0].messages.map((m: any) => [m.id === posted.ts, m.text, m.ephemeral, m.rows])).toEqual([
      [true, "Rejected: Friday", false, [{ kind: "text", text: "Rejected by <@U0ALICE>" }]],
      [false, "Thanks, noted.", true, []],
    ]);
    resetWorkspaceHandlers();
  });

  it("runtime functions refuse bad input before any call, and surface the plugin's errors as PlatformErrors", async () => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    const projectEnv = {
      PLATFORM_WORKER_SECRET: row.worker_secret,
      PLATFORM_PROJECT_ID: String(row.id),
      WORKSPACE_PLUGIN: {
        fetch: (input: RequestInfo | URL, init?: RequestInit) => t.callPlugin(new Request(input, init)),
      },
    };
    await expect(workspace.sendMessage("general", "x", { env: projectEnv })).rejects.toMatchObject({
      code: "invalid_input",
    });
    await expect(workspace.addReaction("C0GENERAL", "nope", "tada", { env: projectEnv })).rejects.toMatchObject({
      code: "invalid_input",
    });
    expect(() => workspace.onEvent("typing" as never, () => {})).toThrow(/unknown event/);
    const posted = await workspace.sendMessage("C0GENERAL", "hello", { env: projectEnv });
    expect(posted).toMatchObject({ channel: "C0GENERAL" });
    await expect(workspace.editMessage("C0GENERAL", posted.ts, "edited", { env: projectEnv })).resolves.toMatchObject({
      ts: posted.ts,
    });
    await expect(workspace.addReaction("C0GENERAL", posted.ts, "tada", { env: projectEnv })).resolves.toBeUndefined();
    await expect(workspace.sendMessage("C0MISSING", "x", { env: projectEnv })).rejects.toMatchObject({
      code: "upstream_error",
    });
    await t.slack.fetch(
      new Request(`${SLACK_ORIGIN}/__fake/ratelimit`, {
        method: "POST",
        body: JSON.stringify({ retryAfter: 9 }),
        headers: { "content-type": "application/json" },
      }),
    );
    await expect(workspace.threadReply("C0GENERAL", posted.ts, "x", { env: projectEnv })).rejects.toMatchObject({
      code: "rate_limited",
      details: { retryAfterSeconds: 9 },
    });
  });
});

describe("POST /deploy and the event filter", () => {
  async function deploy(t: Setup, row: ProjectRow, body: Record<string, unknown>): Promise<Response> {
    return t.callPlugin(
      await signedRequest({ project: row, path: "/deploy", body: JSON.stringify(body), origin: PLUGIN_ORIGIN }),
    );
  }

  it("records the project's events; then only those are dispatched", async () => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    const response = await deploy(t, row, { plugins: { workspace: { events: ["mention", "mention"] } } });
    expect(await response.json()).toEqual({ events: ["mention"], workspaces: 1 });
    await t.trigger({ kind: "message", teamId: "T0TEST" });
    await t.trigger({ kind: "mention", teamId: "T0TEST" });
    await t.settle();
    expect(pluginDispatches(t).map((c) => JSON.parse(c.body).name)).toEqual(["mention"]);
    // The bot token survived the metadata update.
    expect((await proxy(t, row, "send-message", { channel: "C0GENERAL", text: "still works" })).status).toBe(200);
  });

  it("refuses unknown events and unauthenticated deploys", async () => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    const bad = await expectError(await deploy(t, row, { events: ["typing"] }), 400, "invalid_input");
    expect(bad.error.message).toContain("typing");
    await expectError(
      await t.callPlugin(new Request(`${PLUGIN_ORIGIN}/deploy`, { method: "POST", body: "{}" })),
      401,
      "unauthorized",
    );
  });
});

describe("reinstall and lease recovery", () => {
  it("after app_uninstalled, reinstalling the app makes proxy calls work again", async () => {
    const t = setup();
    const { user, row } = await installedProject(t, "ada@example.com", "ada-app");
    await t.trigger({ kind: "app_uninstalled", teamId: "T0TEST" });
    await expectError(await proxy(t, row, "send-message", { channel: "C0GENERAL", text: "x" }), 409, "revoked");
    expect((await install(t, user, "ada-app")).status).toBe(200);
    expect((await proxy(t, row, "send-message", { channel: "C0GENERAL", text: "back" })).status).toBe(200);
  });

  it("a lease left by a refresher that died expires, and the next caller refreshes", async () => {
    const t = setup({ tokenRotation: true });
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    await env.DB.prepare("UPDATE plugin_oauth_connections SET token_expires_at = ? WHERE project_id = ?")
      .bind(Date.now() - 1000, row.id)
      .run();
    await env.DB.prepare("UPDATE plugin_resources SET metadata = json_set(metadata, '$.refreshLease', json(?))")
      .bind(JSON.stringify({ holder: "dead", until: Date.now() - 1 }))
      .run();
    expect((await proxy(t, row, "send-message", { channel: "C0GENERAL", text: "x" })).status).toBe(200);
    expect(t.slackRequests.filter((r) => r.body.includes("grant_type=refresh_token"))).toHaveLength(1);
    expect(await env.DB.prepare("SELECT metadata FROM plugin_resources").first<string>("metadata")).not.toContain(
      "refreshLease",
    );
  });
});

describe("token_expired from Slack before our recorded expiry", () => {
  it("refreshes and retries once instead of failing", async () => {
    const t = setup({ tokenRotation: true, expiresIn: 43_200 });
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    // Slack expires the install token while our record still says it is fresh.
    await t.slack.fetch(
      new Request(`${SLACK_ORIGIN}/__fake/expire`, {
        method: "POST",
        body: JSON.stringify({ teamId: "T0TEST" }),
        headers: { "content-type": "application/json" },
      }),
    );
    const response = await proxy(t, row, "send-message", { channel: "C0GENERAL", text: "x" });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(t.slack.recorded.map((c) => c.error ?? "ok")).toEqual(["token_expired", "ok"]);
    expect(t.slackRequests.filter((r) => r.body.includes("grant_type=refresh_token"))).toHaveLength(1);
  });
});

describe("runtime metadata", () => {
  it("the build metadata lists the events the project listens to", () => {
    resetWorkspaceHandlers();
    workspace.onEvent("reaction", () => {});
    workspace.onEvent("mention", () => {});
    workspace.onEvent("mention", () => {});
    expect((platformRuntime.metadata().plugins as Record<string, unknown>).workspace).toEqual({
      events: ["reaction", "mention"],
    });
    resetWorkspaceHandlers();
  });
});

// ---------------------------------------------------------------------------
// Uninstall and connection health (through the API worker, which calls the plugin's /uninstall)
// ---------------------------------------------------------------------------

/** The API worker bound to this plugin worker, as deployed (WORKSPACE_PLUGIN). */
function apiFor(t: Setup) {
  return apiHarness({
    env: {
      WORKSPACE_PLUGIN_URL: PLUGIN_ORIGIN,
      WORKSPACE_PLUGIN: {
        fetch: (input: RequestInfo | URL, init?: RequestInit) => t.callPlugin(new Request(input, init)),
      },
    } as never,
  }).env;
}

async function uninstall(t: Setup, user: TestUser, slug: string): Promise<Response> {
  return callApi("DELETE", `/projects/${slug}/plugins/workspace`, { token: user.token, env: apiFor(t) });
}

async function pluginsOf(t: Setup, user: TestUser, slug: string): Promise<any> {
  const response = await callApi("GET", `/projects/${slug}/plugins`, { token: user.token, env: apiFor(t) });
  expect(response.status).toBe(200);
  return response.json();
}

describe("uninstall", () => {
  it("revokes the bot token at Slack, deletes the connection, releases the workspace: another project installs it", async () => {
    const t = setup();
    const ada = await installedProject(t, "ada@example.com", "ada-app");
    const { user: bob, row: bobRow } = await userWithProject("bob@example.com", "bob-app");
    expect((await install(t, bob, "bob-app")).status).toBe(409);

    const response = await uninstall(t, ada.user, "ada-app");
    expect(response.status, await response.clone().text()).toBe(200);
    expect(await response.json()).toEqual({
      plugin: "workspace",
      atProvider: ["Revoked the bot token at Slack."],
      connectionDeleted: true,
      released: [expect.objectContaining({ plugin: "workspace", type: "workspace", externalId: "T0TEST" })],
    });
    expect(t.slack.recorded.filter((c) => c.method === "auth.revoke")).toMatchObject([{ ok: true }]);
    expect(await pluginsOf(t, ada.user, "ada-app")).toEqual({ connections: [], resources: [] });
    // The revoked token is dead at Slack too.
    await expectError(await proxy(t, ada.row, "send-message", { channel: "C0GENERAL", text: "x" }), 404, "not_found");

    const moved = await install(t, bob, "bob-app");
    expect(moved.status, await moved.clone().text()).toBe(200);
    const owner = await env.DB.prepare(
      "SELECT project_id FROM plugin_resources WHERE external_resource_id = 'T0TEST'",
    ).first("project_id");
    expect(owner).toBe(bobRow.id);
    expect((await pluginsOf(t, bob, "bob-app")).resources).toMatchObject([{ externalId: "T0TEST" }]);
  });

  it("a second uninstall, an unknown plugin, another user's project and a missing CLI token are refused", async () => {
    const t = setup();
    const ada = await installedProject(t, "ada@example.com", "ada-app");
    const { user: bob } = await userWithProject("bob@example.com", "bob-app");
    const apiEnv = apiFor(t);
    await expectError(
      await callApi("DELETE", "/projects/ada-app/plugins/workspace", { env: apiEnv }),
      401,
      "unauthorized",
    );
    await expectError(
      await callApi("DELETE", "/projects/ada-app/plugins/workspace", { token: "forged-token", env: apiEnv }),
      401,
      "unauthorized",
    );
    await expectError(await uninstall(t, bob, "ada-app"), 404, "not_found"); // not bob's: as if missing
    await expectError(
      await callApi("DELETE", "/projects/ada-app/plugins/email-send", { token: ada.user.token, env: apiEnv }),
      404,
      "not_found",
    );
    await expectError(await uninstall(t, bob, "bob-app"), 404, "not_found"); // bob installed nothing
    expect(t.slack.recorded.filter((c) => c.method === "auth.revoke")).toHaveLength(0);
    expect((await uninstall(t, ada.user, "ada-app")).status).toBe(200);
    await expectError(await uninstall(t, ada.user, "ada-app"), 404, "not_found");
  });

  it("the plugin's /uninstall refuses a forged or replayed-elsewhere identity token", async () => {
    const t = setup();
    const ada = await installedProject(t, "ada@example.com", "ada-app");
    const forged = await signedRequest({
      project: ada.row,
      path: "/uninstall",
      body: "{}",
      origin: PLUGIN_ORIGIN,
      secret: "not-the-secret",
    });
    await expectError(await t.callPlugin(forged), 401, "unauthorized");
    // A token signed for /deploy does not open /uninstall.
    const elsewhere = await signedRequest({
      project: ada.row,
      path: "/uninstall",
      signedPath: "/deploy",
      body: "{}",
      origin: PLUGIN_ORIGIN,
    });
    await expectError(await t.callPlugin(elsewhere), 401, "unauthorized");
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM plugin_resources").first("n")).toBe(1);
  });

  it("app_uninstalled from Slack releases the claim: another project can install the workspace", async () => {
    const t = setup();
    const ada = await installedProject(t, "ada@example.com", "ada-app");
    const { user: bob } = await userWithProject("bob@example.com", "bob-app");
    await t.trigger({ kind: "app_uninstalled", teamId: "T0TEST" });
    const adaState = await pluginsOf(t, ada.user, "ada-app");
    expect(adaState.resources).toEqual([]);
    expect(adaState.connections).toMatchObject([{ plugin: "workspace", status: "revoked" }]);
    expect((await install(t, bob, "bob-app")).status).toBe(200);
    expect((await pluginsOf(t, bob, "bob-app")).resources).toMatchObject([{ externalId: "T0TEST" }]);
  });
});

describe("connection health", () => {
  it("Slack revokes the token: a proxy call fails and the status is needs_reconnect with Slack's error; a reinstall makes it active", async () => {
    const t = setup();
    const ada = await installedProject(t, "ada@example.com", "ada-app");
    expect((await pluginsOf(t, ada.user, "ada-app")).connections).toMatchObject([
      { status: "active", lastError: null },
    ]);
    await t.slack.fetch(
      new Request(`${SLACK_ORIGIN}/__fake/revoke`, {
        method: "POST",
        body: JSON.stringify({ teamId: "T0TEST" }),
        headers: { "content-type": "application/json" },
      }),
    );
    await expectError(await proxy(t, ada.row, "send-message", { channel: "C0GENERAL", text: "x" }), 409, "revoked");
    const [connection] = (await pluginsOf(t, ada.user, "ada-app")).connections;
    expect(connection).toMatchObject({ status: "needs_reconnect", lastError: "token_revoked", revoked: false });
    expect(Date.parse(connection.lastErrorAt)).not.toBeNaN();
    expect(JSON.stringify(connection)).not.toContain("xoxb");

    expect((await install(t, ada.user, "ada-app")).status).toBe(200);
    expect((await pluginsOf(t, ada.user, "ada-app")).connections).toMatchObject([
      { status: "active", lastError: null },
    ]);
    expect((await proxy(t, ada.row, "send-message", { channel: "C0GENERAL", text: "back" })).status).toBe(200);
  });

  it("a call Slack accepts clears needs_reconnect", async () => {
    const t = setup();
    const ada = await installedProject(t, "ada@example.com", "ada-app");
    await env.DB.prepare("UPDATE plugin_oauth_connections SET last_error = 'invalid_auth', last_error_at = 1").run();
    expect((await pluginsOf(t, ada.user, "ada-app")).connections).toMatchObject([{ status: "needs_reconnect" }]);
    expect((await proxy(t, ada.row, "send-message", { channel: "C0GENERAL", text: "ok" })).status).toBe(200);
    expect((await pluginsOf(t, ada.user, "ada-app")).connections).toMatchObject([
      { status: "active", lastError: null },
    ]);
  });
});

describe("interactivity: block actions and views", () => {
  const approvalBlocks = (runId: string) => [
    { type: "section", text: { type: "mrkdwn", text: "Deploy?" } },
    {
      type: "actions",
      block_id: "decide",
      elements: [
        { type: "button", action_id: `approve:${runId}`, text: { type: "plain_text", text: "Approve" }, value: runId },
        { type: "button", action_id: `reject:${runId}`, text: { type: "plain_text", text: "Reject" }, style: "danger" },
        {
          type: "static_select",
          action_id: "env",
          placeholder: { type: "plain_text", text: "Where?" },
          options: [
            { text: { type: "plain_text", text: "Staging" }, value: "staging" },
            { text: { type: "plain_text", text: "Production" }, value: "prod" },
          ],
        },
      ],
    },
  ];
  const view = (runId: string) => ({
    type: "modal",
    callback_id: `why:${runId}`,
    private_metadata: runId,
    title: { type: "plain_text", text: "Why reject?" },
    submit: { type: "plain_text", text: "Reject" },
    blocks: [
      {
        type: "input",
        block_id: "reason_block",
        label: { type: "plain_text", text: "Reason" },
        element: { type: "plain_text_input", action_id: "reason", multiline: true },
      },
    ],
  });

  async function posted(t: Setup, row: ProjectRow, runId = "run-1"): Promise<string> {
    const response = await proxy(t, row, "send-message", {
      channel: "C0GENERAL",
      text: "Deploy?",
      blocks: approvalBlocks(runId),
    });
    expect(response.status, await response.clone().text()).toBe(200);
    return ((await response.json()) as { ts: string }).ts;
  }

  const dispatchOf = (t: Setup, i = 0) => JSON.parse(pluginDispatches(t)[i]!.body);

  it("a click is a signed form body (payload=…), acknowledged with an empty 200 and dispatched once as an action", async () => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    const ts = await posted(t, row);
    const out = await t.trigger({ kind: "action", actionId: "approve:run-1" });
    expect(out.status).toBe(200);
    expect(out.json.response).toMatchObject({ status: 200, body: "" });
    await t.settle();
    expect(pluginDispatches(t)).toHaveLength(1);
    expect(pluginDispatches(t)[0]!.scriptName).toBe(row.script_name);
    const dispatch = dispatchOf(t);
    expect(dispatch).toMatchObject({
      kind: "action",
      name: "approve:run-1",
      user: { id: "U0ALICE", name: "alice" },
      event: {
        type: "action",
        teamId: "T0TEST",
        actionId: "approve:run-1",
        blockId: "decide",
        elementType: "button",
        value: "run-1",
        values: ["run-1"],
        channel: "C0GENERAL",
        messageTs: ts,
        message: { ts, text: "Deploy?" },
      },
    });
    // The provider's trigger_id stays with the plugin: the project gets it sealed.
    expect(pluginDispatches(t)[0]!.body).not.toContain(out.json.delivered.trigger_id);
    // The same payload delivered again (a retry) is acknowledged, not dispatched again.
    const again = new URLSearchParams({ payload: JSON.stringify(out.json.delivered) }).toString();
    const retried = await t.callPlugin(await signedForm(again));
    expect(retried.status).toBe(200);
    await t.settle();
    expect(pluginDispatches(t)).toHaveLength(1);
  });

  it("a select's chosen option reaches the handler; a value it does not offer is refused by the fake", async () => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    await posted(t, row);
    expect((await t.trigger({ kind: "action", actionId: "env", value: "dev" })).json.error).toMatch(
      /Choose one of this select's options/,
    );
    await t.trigger({ kind: "action", actionId: "env", value: "prod" });
    await t.settle();
    expect(dispatchOf(t).event).toMatchObject({ elementType: "static_select", value: "prod", values: ["prod"] });
  });

  it.each([
    ["a forged signature", { secret: "not-the-secret" }, 401],
    ["a stale one (6 minutes)", { ts: Math.floor(Date.now() / 1000) - 360 }, 401],
  ])("a form body with %s is refused %i, nothing dispatched", async (_name, options, status) => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    await posted(t, row);
    const out = await t.trigger({ kind: "action", actionId: "approve:run-1" });
    await t.settle();
    const dispatched = pluginDispatches(t).length;
    const body = new URLSearchParams({ payload: JSON.stringify({ ...out.json.delivered, trigger_id: "1.2.new" }) });
    const response = await t.callPlugin(await signedForm(body.toString(), options));
    expect(response.status).toBe(status);
    await t.settle();
    expect(pluginDispatches(t)).toHaveLength(dispatched);
  });

  it("a click from a workspace no project claimed is refused 404", async () => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    await posted(t, row);
    const out = await t.trigger({ kind: "action", actionId: "approve:run-1" });
    await t.settle();
    const other = {
      ...out.json.delivered,
      team: { id: "T0OTHER" },
      user: { id: "U1", team_id: "T0OTHER" },
      trigger_id: "9.9.x",
    };
    const response = await t.callPlugin(
      await signedForm(new URLSearchParams({ payload: JSON.stringify(other) }).toString()),
    );
    expect(response.status).toBe(404);
    expect(((await response.json()) as any).error.message).toMatch(/T0OTHER is not connected to any project/);
  });

  it("openView with the click's trigger token opens a view; its submission dispatches fields by action_id and private_metadata", async () => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    await posted(t, row, "run-7");
    await t.trigger({ kind: "action", actionId: "reject:run-7" });
    await t.settle();
    const { triggerToken } = dispatchOf(t).event;
    const opened = await proxy(t, row, "open-view", { triggerToken, view: view("run-7") });
    expect(opened.status, await opened.clone().text()).toBe(200);
    expect(await opened.json()).toEqual({ viewId: expect.stringMatching(/^V0/) });
    // The trigger opens one view: a second use is Slack's expired_trigger_id, said plainly.
    const twice = await expectError(
      await proxy(t, row, "open-view", { triggerToken, view: view("run-7") }),
      400,
      "invalid_input",
    );
    expect(twice.error.message).toMatch(/Slack refused to open the view \(expired_trigger_id\)/);
    const submitted = await t.trigger({ kind: "view", callbackId: "why:run-7", fields: { reason: "Friday" } });
    expect(submitted.json.response).toMatchObject({ status: 200, body: "" });
    await t.settle();
    expect(dispatchOf(t, 1)).toMatchObject({
      kind: "view",
      name: "why:run-7",
      event: {
        type: "view",
        callbackId: "why:run-7",
        privateMetadata: "run-7",
        fields: { reason: "Friday" },
        values: { reason_block: { reason: { type: "plain_text_input", value: "Friday" } } },
        user: { id: "U0ALICE" },
      },
    });
    // Submitted (an empty 200 closes it): nothing left to submit.
    expect((await t.trigger({ kind: "view", callbackId: "why:run-7", fields: { reason: "x" } })).json.error).toMatch(
      /No view with callback_id "why:run-7" is open/,
    );
  });

  it("a trigger token older than 3 s, or another project's, is refused before any call", async () => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    const { row: bob } = await userWithProject("bob@example.com", "bob-app", { private: true });
    const { sealTriggerToken } = await import("#src/plugins/workspace/triggerToken.ts");
    const stale = await sealTriggerToken(t.env, row.id, { triggerId: "1.2.3", teamId: "T0TEST" }, Date.now() - 4_000);
    const bobs = await sealTriggerToken(t.env, bob.id, { triggerId: "1.2.3", teamId: "T0TEST" });
    const before = t.slackRequests.length;
    const old = await expectError(
      await proxy(t, row, "open-view", { triggerToken: stale, view: view("r") }),
      400,
      "invalid_input",
    );
    expect(old.error.message).toBe(
      "The click is more than 3 seconds old: the workspace opens a view only within 3 seconds of it. Call workspace.openView before any slow work.",
    );
    const foreign = await expectError(
      await proxy(t, row, "open-view", { triggerToken: bobs, view: view("r") }),
      400,
      "invalid_input",
    );
    expect(foreign.error.message).toBe("triggerToken is not valid for this project.");
    expect(t.slackRequests).toHaveLength(before);
  });

  it("sendEphemeral posts a message only that user sees", async () => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    const response = await proxy(t, row, "send-ephemeral", {
      channel: "C0GENERAL",
      user: "U0ALICE",
      text: "Already approved.",
    });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(await response.json()).toEqual({ channel: "C0GENERAL", messageTs: expect.stringMatching(/^\d+\.\d+$/) });
    const chat = (await (
      await t.slack.fetch(new Request(`${SLACK_ORIGIN}/__fake/chat?resourceId=T0TEST`))
    ).json()) as any;
    expect(chat.channels[0].messages.at(-1)).toMatchObject({ text: "Already approved.", ephemeral: true });
  });

  const tooMany = (n: number) => Array.from({ length: n }, () => ({ type: "divider" }));
  const button = (id: string, text = "B") => ({ type: "button", action_id: id, text: { type: "plain_text", text } });
  it.each([
    ["send-message", { blocks: tooMany(51) }, "blocks must be an array of 0–50 blocks."],
    [
      "send-message",
      { blocks: [{ type: "actions", elements: Array.from({ length: 26 }, (_, i) => button(`b${i}`)) }] },
      "blocks[0].elements must be an array of 1–25 elements.",
    ],
    [
      "send-message",
      { blocks: [{ type: "actions", elements: [button("a", "x".repeat(76))] }] },
      "blocks[0].elements[0].text.text must be 1–75 characters.",
    ],
    [
      "send-message",
      { blocks: [{ type: "actions", elements: [button("a"), button("a")] }] },
      'blocks[0].elements[1].action_id repeats "a": each must be unique.',
    ],
    [
      "send-message",
      { blocks: [{ type: "actions", elements: [button("x".repeat(256))] }] },
      "blocks[0].elements[0].action_id must be 1–255 characters.",
    ],
    [
      "open-view",
      { view: { ...view("r"), title: { type: "plain_text", text: "x".repeat(25) } } },
      "view.title.text must be 1–24 characters.",
    ],
    [
      "open-view",
      { view: { ...view("r"), submit: undefined } },
      "view.submit is required when the view has input blocks.",
    ],
    [
      "open-view",
      { view: { ...view("r"), private_metadata: "x".repeat(3001) } },
      "view.private_metadata must be a string of at most 3000 characters.",
    ],
  ])("%s with %o is refused before any call", async (route, extra, message) => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    const before = t.slackRequests.length;
    const body =
      route === "open-view" ? { triggerToken: "x", ...extra } : { channel: "C0GENERAL", text: "x", ...extra };
    const error = await expectError(await proxy(t, row, route, body), 400, "invalid_input");
    expect(error.error.message).toBe(message);
    expect(t.slackRequests).toHaveLength(before);
  });
});

async function signedForm(body: string, options: { secret?: string; ts?: number } = {}): Promise<Request> {
  const ts = String(options.ts ?? Math.floor(Date.now() / 1000));
  const signature = await signWorkspaceRequest(options.secret ?? SIGNING_SECRET, ts, body);
  return new Request(`${PLUGIN_ORIGIN}/webhook`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      "X-Slack-Signature": signature,
      "X-Slack-Request-Timestamp": ts,
    },
    body,
  });
}
