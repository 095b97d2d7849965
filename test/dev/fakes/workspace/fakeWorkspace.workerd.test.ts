import { describe, expect, it } from "vitest";
import { createFakeWorkspace, type FakeWorkspaceConfig } from "#src/dev/fakes/workspace/fakeWorkspace.ts";
import fakeSlackWorker, { type FakeWorkspaceEnv } from "#src/dev/fakes/workspace/index.ts";
import type { WorkspaceEnv } from "#src/plugins/workspace/env.ts";
import { callWorkspaceMethod } from "#src/plugins/workspace/workspaceApi.ts";
import { verifyWorkspaceSignature } from "#src/plugins/workspace/workspaceSignature.ts";

const BASE = "https://slack.fake";
const REDIRECT = "https://workspace-plugin.test/oauth/callback";
const CONFIG: FakeWorkspaceConfig = {
  clientId: "111.222",
  clientSecret: "client-secret",
  signingSecret: "signing-secret",
  webhookUrl: "https://workspace-plugin.test/webhook",
  redirectUris: [REDIRECT],
};

function fake(overrides: Partial<FakeWorkspaceConfig> = {}) {
  return createFakeWorkspace({ ...CONFIG, ...overrides });
}

type Fake = ReturnType<typeof fake>;

const basic = (id: string, secret: string) => `Basic ${btoa(`${id}:${secret}`)}`;

function form(params: Record<string, string>): { body: string; headers: Record<string, string> } {
  return {
    body: new URLSearchParams(params).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded" },
  };
}

async function consent(slack: Fake, decision: "allow" | "cancel", params: Record<string, string> = {}): Promise<URL> {
  const q = new URLSearchParams({
    client_id: CONFIG.clientId,
    scope: "chat:write,reactions:write",
    redirect_uri: REDIRECT,
    state: "st-1",
    ...params,
  });
  const page = await slack.fetch(new Request(`${BASE}/oauth/v2/authorize?${q}`));
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toContain(params.team ? `Workspace ${params.team}` : "Test Workspace");
  // Submit the page's form the way a browser would.
  const fields = Object.fromEntries(
    [...html.matchAll(/name="([^"]+)" value="([^"]*)"/g)].map((m) => [
      m[1]!,
      m[2]!.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n))),
    ]),
  );
  const response = await slack.fetch(
    new Request(`${BASE}/oauth/v2/authorize`, { method: "POST", ...form({ ...fields, decision }), redirect: "manual" }),
  );
  expect(response.status).toBe(302);
  return new URL(response.headers.get("location")!);
}

async function exchange(
  slack: Fake,
  params: Record<string, string>,
  auth = basic(CONFIG.clientId, CONFIG.clientSecret),
) {
  const { body, headers } = form(params);
  const response = await slack.fetch(
    new Request(`${BASE}/api/oauth.v2.access`, { method: "POST", body, headers: { ...headers, authorization: auth } }),
  );
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, any>;
}

async function install(slack: Fake, team?: string) {
  const location = await consent(slack, "allow", team ? { team } : {});
  return exchange(slack, { code: location.searchParams.get("code")!, redirect_uri: REDIRECT });
}

async function api(slack: Fake, method: string, token: string | null, params: Record<string, unknown>) {
  const headers: Record<string, string> = { "content-type": "application/json; charset=utf-8" };
  if (token) headers.authorization = `Bearer ${token}`;
  return slack.fetch(new Request(`${BASE}/api/${method}`, { method: "POST", headers, body: JSON.stringify(params) }));
}

describe("fake Slack: OAuth v2", () => {
  it("consent page names the workspace; Allow redirects with a code and the state", async () => {
    const location = await consent(fake(), "allow");
    expect(location.origin + location.pathname).toBe(REDIRECT);
    expect(location.searchParams.get("state")).toBe("st-1");
    expect(location.searchParams.get("code")).toMatch(/^[0-9a-f]+\.[0-9a-f]+$/);
  });

  it("Cancel redirects with error=access_denied and no code", async () => {
    const location = await consent(fake(), "cancel");
    expect(location.searchParams.get("error")).toBe("access_denied");
    expect(location.searchParams.get("code")).toBeNull();
    expect(location.searchParams.get("state")).toBe("st-1");
  });

  it("refuses an unknown client_id or an unregistered redirect_uri on the authorize page", async () => {
    const slack = fake();
    const bad = (p: Record<string, string>) =>
      slack.fetch(
        new Request(
          `${BASE}/oauth/v2/authorize?${new URLSearchParams({ client_id: CONFIG.clientId, redirect_uri: REDIRECT, state: "s", ...p })}`,
        ),
      );
    expect((await bad({ client_id: "nope" })).status).toBe(400);
    expect((await bad({ redirect_uri: "https://evil.test/cb" })).status).toBe(400);
  });

  it("exchanges a code once: team, bot token, bot user, authed user", async () => {
    const slack = fake();
    const location = await consent(slack, "allow");
    const code = location.searchParams.get("code")!;
    const first = await exchange(slack, { code, redirect_uri: REDIRECT });
    expect(first).toMatchObject({
      ok: true,
      token_type: "bot",
      team: { id: "T0TEST", name: "Test Workspace" },
      bot_user_id: "U0BOT0TEST",
      authed_user: { id: "U0ALICE" },
    });
    expect(first.access_token).toMatch(/^xoxb-T0TEST-/);
    expect(first.refresh_token).toBeUndefined();
    expect(await exchange(slack, { code, redirect_uri: REDIRECT })).toEqual({ ok: false, error: "invalid_code" });
  });

  it("checks client credentials (Basic or body) and the redirect_uri", async () => {
    const slack = fake();
    const code = async () => (await consent(slack, "allow")).searchParams.get("code")!;
    expect(
      await exchange(slack, { code: await code(), redirect_uri: REDIRECT }, basic(CONFIG.clientId, "wrong")),
    ).toEqual({ ok: false, error: "bad_client_secret" });
    expect(
      await exchange(slack, { code: await code(), redirect_uri: REDIRECT }, basic("other", CONFIG.clientSecret)),
    ).toEqual({ ok: false, error: "invalid_client_id" });
    expect(await exchange(slack, { code: await code(), redirect_uri: REDIRECT + "x" })).toEqual({
      ok: false,
      error: "bad_redirect_uri",
    });
    const viaBody = await exchange(
      slack,
      { code: await code(), redirect_uri: REDIRECT, client_id: CONFIG.clientId, client_secret: CONFIG.clientSecret },
      "",
    );
    expect(viaBody.ok).toBe(true);
    expect(await exchange(slack, { code: "made-up", redirect_uri: REDIRECT })).toEqual({
      ok: false,
      error: "invalid_code",
    });
  });

  it("the team query parameter picks another workspace", async () => {
    const result = await install(fake(), "T0OTHER");
    expect(result.team).toEqual({ id: "T0OTHER", name: "Workspace T0OTHER" });
  });

  it("token rotation: expiring token plus a single-use refresh token", async () => {
    const slack = fake({ tokenRotation: true, expiresIn: 43_200 });
    const first = await install(slack);
    expect(first.access_token).toMatch(/^xoxe\.xoxb-/);
    expect(first.refresh_token).toMatch(/^xoxe-1-/);
    expect(first.expires_in).toBe(43_200);
    const refreshed = await exchange(slack, { grant_type: "refresh_token", refresh_token: first.refresh_token });
    expect(refreshed).toMatchObject({ ok: true, team: { id: "T0TEST" }, expires_in: 43_200 });
    expect(refreshed.access_token).not.toBe(first.access_token);
    expect(refreshed.refresh_token).not.toBe(first.refresh_token);
    // The old refresh token is dead.
    expect(await exchange(slack, { grant_type: "refresh_token", refresh_token: first.refresh_token })).toEqual({
      ok: false,
      error: "invalid_refresh_token",
    });
    expect((await exchange(slack, { grant_type: "refresh_token", refresh_token: refreshed.refresh_token })).ok).toBe(
      true,
    );
  });

  it("an expired access token answers token_expired", async () => {
    let clock = 1_800_000_000_000;
    const slack = fake({ tokenRotation: true, expiresIn: 60, now: () => clock });
    const { access_token } = await install(slack);
    expect(
      await (await api(slack, "chat.postMessage", access_token, { channel: "C0GENERAL", text: "hi" })).json(),
    ).toMatchObject({ ok: true });
    clock += 61_000;
    expect(
      await (await api(slack, "chat.postMessage", access_token, { channel: "C0GENERAL", text: "hi" })).json(),
    ).toEqual({ ok: false, error: "token_expired" });
  });
});

describe("fake Slack: Web API", () => {
  it("chat.postMessage, a thread reply, chat.update and reactions.add; everything recorded", async () => {
    const slack = fake();
    const { access_token } = await install(slack);
    const posted = (await (
      await api(slack, "chat.postMessage", access_token, { channel: "C0GENERAL", text: "parent" })
    ).json()) as any;
    expect(posted).toMatchObject({ ok: true, channel: "C0GENERAL", message: { text: "parent", user: "U0BOT0TEST" } });
    const reply = (await (
      await api(slack, "chat.postMessage", access_token, { channel: "C0GENERAL", text: "child", thread_ts: posted.ts })
    ).json()) as any;
    expect(reply.message.thread_ts).toBe(posted.ts);
    expect(
      await (
        await api(slack, "chat.update", access_token, { channel: "C0GENERAL", ts: posted.ts, text: "edited" })
      ).json(),
    ).toMatchObject({ ok: true, text: "edited" });
    const thumbsUp = async () =>
      (
        await api(slack, "reactions.add", access_token, {
          channel: "C0GENERAL",
          timestamp: posted.ts,
          name: "thumbsup",
        })
      ).json();
    expect(await thumbsUp()).toEqual({ ok: true });
    expect(await thumbsUp()).toEqual({ ok: false, error: "already_reacted" });
    const recorded = (await (await slack.fetch(new Request(`${BASE}/__fake/recorded`))).json()) as { calls: any[] };
    expect(recorded.calls.map((c) => c.method)).toEqual([
      "chat.postMessage",
      "chat.postMessage",
      "chat.update",
      "reactions.add",
      "reactions.add",
    ]);
    expect(recorded.calls[1].params).toMatchObject({ thread_ts: posted.ts, text: "child" });
  });

  it("answers HTTP 200 with ok:false the way Slack does", async () => {
    const slack = fake();
    const { access_token } = await install(slack);
    const call = async (method: string, token: string | null, params: Record<string, unknown>) => {
      const response = await api(slack, method, token, params);
      expect(response.status).toBe(200);
      return response.json();
    };
    expect(await call("chat.postMessage", null, { channel: "C0GENERAL", text: "x" })).toEqual({
      ok: false,
      error: "not_authed",
    });
    expect(await call("chat.postMessage", "xoxb-made-up", { channel: "C0GENERAL", text: "x" })).toEqual({
      ok: false,
      error: "invalid_auth",
    });
    expect(await call("chat.postMessage", access_token, { channel: "C0NOPE", text: "x" })).toEqual({
      ok: false,
      error: "channel_not_found",
    });
    expect(await call("chat.postMessage", access_token, { channel: "C0GENERAL", text: "" })).toEqual({
      ok: false,
      error: "no_text",
    });
    expect(
      await call("chat.postMessage", access_token, { channel: "C0GENERAL", text: "x", thread_ts: "1.000001" }),
    ).toEqual({ ok: false, error: "thread_not_found" });
    expect(await call("chat.update", access_token, { channel: "C0GENERAL", ts: "1.000001", text: "x" })).toEqual({
      ok: false,
      error: "message_not_found",
    });
    await slack.fetch(
      new Request(`${BASE}/__fake/revoke`, {
        method: "POST",
        body: JSON.stringify({ teamId: "T0TEST" }),
        headers: { "content-type": "application/json" },
      }),
    );
    expect(await call("chat.postMessage", access_token, { channel: "C0GENERAL", text: "x" })).toEqual({
      ok: false,
      error: "token_revoked",
    });
  });

  it("auth.revoke revokes the token presented (the team's bot tokens); a reinstall gets a working one", async () => {
    const slack = fake();
    const { access_token } = await install(slack);
    const other = await install(slack, "T0OTHER");
    const revoke = await api(slack, "auth.revoke", access_token, {});
    expect(await revoke.json()).toEqual({ ok: true, revoked: true });
    expect(await (await api(slack, "auth.revoke", access_token, {})).json()).toEqual({
      ok: false,
      error: "token_revoked",
    });
    expect(await (await api(slack, "auth.revoke", null, {})).json()).toEqual({ ok: false, error: "not_authed" });
    const post = (token: string) => api(slack, "chat.postMessage", token, { channel: "C0GENERAL", text: "x" });
    expect(await (await post(access_token)).json()).toMatchObject({ ok: false, error: "token_revoked" });
    expect(await (await post(other.access_token)).json()).toMatchObject({ ok: true }); // another team is untouched
    const again = await install(slack);
    expect(await (await post(again.access_token)).json()).toMatchObject({ ok: true });
    expect(slack.recorded.filter((c) => c.method === "auth.revoke").map((c) => c.ok)).toEqual([true, false, false]);
  });

  it("429 with Retry-After while the rate-limit switch is on", async () => {
    const slack = fake();
    const { access_token } = await install(slack);
    await slack.fetch(
      new Request(`${BASE}/__fake/ratelimit`, {
        method: "POST",
        body: JSON.stringify({ retryAfter: 17, count: 2 }),
        headers: { "content-type": "application/json" },
      }),
    );
    for (let i = 0; i < 2; i++) {
      const limited = await api(slack, "chat.postMessage", access_token, { channel: "C0GENERAL", text: "x" });
      expect(limited.status).toBe(429);
      expect(limited.headers.get("retry-after")).toBe("17");
      expect(await limited.json()).toEqual({ ok: false, error: "ratelimited" });
    }
    expect((await api(slack, "chat.postMessage", access_token, { channel: "C0GENERAL", text: "x" })).status).toBe(200);
  });
});

// The plugin's own Web API client (workspaceApi.ts) against the fake, asserting Slack's documented answers
// (docs.slack.dev/reference/methods/auth.test, chat.postMessage).
describe("fake Slack: answers as Slack's", () => {
  async function installed() {
    const slack = fake();
    const { access_token } = await install(slack);
    const env = { SLACK_BASE_URL: BASE, SLACK: { fetch: (r: Request) => slack.fetch(r) } } as unknown as WorkspaceEnv;
    const method = async (name: string, params: Record<string, unknown>, token: string = access_token) =>
      (await callWorkspaceMethod(env, name, token, params)).answer;
    return { slack, method, token: access_token as string };
  }

  it("auth.test names the token's workspace, bot user and bot id; a bad token is invalid_auth", async () => {
    const { method } = await installed();
    expect(await method("auth.test", {})).toEqual({
      ok: true,
      url: "https://t0test.slack.fake/",
      team: "Test Workspace",
      user: "platform-bot",
      team_id: "T0TEST",
      user_id: "U0BOT0TEST",
      bot_id: "B0BOT0TEST",
      is_enterprise_install: false,
    });
    expect(await method("auth.test", {}, "xoxb-nope")).toEqual({ ok: false, error: "invalid_auth" });
  });

  it("chat.postMessage with blocks and no text is posted (text is only their fallback); with neither, no_text", async () => {
    const { method } = await installed();
    const blocks = [{ type: "section", text: { type: "mrkdwn", text: "*Deployed*" } }];
    const posted = await method("chat.postMessage", { channel: "C0GENERAL", blocks });
    // Slack gives each block a block_id when it has none.
    expect(posted).toMatchObject({
      ok: true,
      channel: "C0GENERAL",
      message: { text: "", blocks: [{ ...blocks[0], block_id: expect.any(String) }] },
    });
    const updated = await method("chat.update", {
      channel: "C0GENERAL",
      ts: posted.ts,
      blocks: [{ type: "divider" }],
    });
    expect(updated).toMatchObject({
      ok: true,
      message: { blocks: [{ type: "divider", block_id: expect.any(String) }] },
    });
    const withAttachments = await method("chat.postMessage", {
      channel: "C0GENERAL",
      attachments: [{ fallback: "Build log", text: "all green" }],
    });
    expect(withAttachments).toMatchObject({ ok: true });
    expect(await method("chat.postMessage", { channel: "C0GENERAL" })).toEqual({ ok: false, error: "no_text" });
    expect(await method("chat.postMessage", { channel: "C0GENERAL", blocks: [{ text: "no type" }] })).toEqual({
      ok: false,
      error: "invalid_blocks",
      response_metadata: { messages: ["[ERROR] blocks[0]: missing required field: type"] },
    });
    expect(
      await method("chat.postMessage", { channel: "C0GENERAL", blocks: Array(51).fill({ type: "divider" }) }),
    ).toEqual({
      ok: false,
      error: "invalid_blocks",
      response_metadata: { messages: ["[ERROR] blocks: must provide between 0 and 50 blocks"] },
    });
  });

  it("form-encoded blocks (a JSON string) count as blocks", async () => {
    const { slack, token } = await installed();
    const response = await slack.fetch(
      new Request(`${BASE}/api/chat.postMessage`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Bearer ${token}` },
        body: new URLSearchParams({ channel: "C0GENERAL", blocks: JSON.stringify([{ type: "divider" }]) }).toString(),
      }),
    );
    expect(await response.json()).toMatchObject({ ok: true, message: { blocks: [{ type: "divider" }] } });
  });
});

describe("fake Slack: event deliveries", () => {
  function capturing() {
    const received: { request: Request; body: string }[] = [];
    const slack = fake({
      deliver: async (request) => {
        received.push({ request, body: await request.text() });
        return new Response("", { status: 200 });
      },
    });
    const trigger = async (params: Record<string, unknown>) => {
      const response = await slack.fetch(
        new Request(`${BASE}/__fake/trigger`, {
          method: "POST",
          body: JSON.stringify(params),
          headers: { "content-type": "application/json" },
        }),
      );
      return { status: response.status, json: (await response.json()) as any };
    };
    return { slack, received, trigger };
  }

  it.each(["message", "mention", "reaction", "app_uninstalled", "tokens_revoked"])(
    "%s: a signed event_callback envelope to the plugin URL",
    async (kind) => {
      const { received, trigger } = capturing();
      const { status, json } = await trigger({ kind, teamId: "T0TEST", text: "hi there" });
      expect(status).toBe(200);
      expect(json.response.status).toBe(200);
      expect(received).toHaveLength(1);
      const { request, body } = received[0]!;
      expect(request.url).toBe(CONFIG.webhookUrl);
      expect(request.method).toBe("POST");
      const check = await verifyWorkspaceSignature(
        CONFIG.signingSecret,
        request.headers.get("x-slack-request-timestamp"),
        request.headers.get("x-slack-signature"),
        body,
      );
      expect(check).toEqual({ ok: true });
      const envelope = JSON.parse(body);
      expect(envelope).toMatchObject({ type: "event_callback", team_id: "T0TEST", api_app_id: "A0PLATFORM" });
      expect(envelope.event_id).toMatch(/^Ev[0-9A-F]+$/);
      const expectedType = {
        message: "message",
        mention: "app_mention",
        reaction: "reaction_added",
        app_uninstalled: "app_uninstalled",
        tokens_revoked: "tokens_revoked",
      }[kind];
      expect(envelope.event.type).toBe(expectedType);
      if (kind === "mention") expect(envelope.event.text).toBe("<@U0BOT0TEST> hi there");
      if (kind === "message") expect(envelope.event.text).toBe("hi there");
      expect(request.headers.get("x-slack-retry-num")).toBeNull();
    },
  );

  it("takes the team as resourceId too (what the test-event route sends)", async () => {
    const { received, trigger } = capturing();
    expect((await trigger({ kind: "message", resourceId: "T0OTHER", text: "hi" })).status).toBe(200);
    expect(JSON.parse(received[0]!.body)).toMatchObject({ type: "event_callback", team_id: "T0OTHER" });
  });

  it("url_verification is a bare challenge body, signed", async () => {
    const { received, trigger } = capturing();
    await trigger({ kind: "url_verification" });
    const body = JSON.parse(received[0]!.body);
    expect(body).toMatchObject({ type: "url_verification" });
    expect(body.challenge).toMatch(/^[0-9a-f]{48}$/);
  });

  it("a retry resends the same event_id with X-Slack-Retry-Num", async () => {
    const { received, trigger } = capturing();
    await trigger({ kind: "message", teamId: "T0TEST" });
    await trigger({ retry: 2 });
    expect(received).toHaveLength(2);
    expect(JSON.parse(received[1]!.body).event_id).toBe(JSON.parse(received[0]!.body).event_id);
    expect(received[1]!.request.headers.get("x-slack-retry-num")).toBe("2");
    expect(received[1]!.request.headers.get("x-slack-retry-reason")).toBe("http_timeout");
  });

  it("refuses an unknown kind", async () => {
    const { received, trigger } = capturing();
    const { status, json } = await trigger({ kind: "bogus" });
    expect(status).toBe(400);
    expect(json.error).toMatch(/Unknown kind/);
    expect(received).toHaveLength(0);
  });
});

describe("fake Slack as a worker", () => {
  it("is configured by vars, keeps one state per env, and delivers through the PLUGIN binding", async () => {
    const received: Request[] = [];
    const workerEnv: FakeWorkspaceEnv = {
      SLACK_CLIENT_ID: "9.9",
      SLACK_CLIENT_SECRET: "worker-secret",
      SLACK_SIGNING_SECRET: "worker-signing",
      PLUGIN_WEBHOOK_URL: "https://plugin.local/webhook",
      TOKEN_ROTATION: "1",
      TOKEN_EXPIRES_IN: "120",
      REDIRECT_URIS: "https://plugin.local/oauth/callback",
      PLUGIN: {
        async fetch(input: RequestInfo | URL, init?: RequestInit) {
          received.push(new Request(input, init));
          return new Response(null, { status: 200 });
        },
      } as unknown as Fetcher,
    };
    const page = await fakeSlackWorker.fetch(
      new Request(
        `${BASE}/oauth/v2/authorize?client_id=9.9&redirect_uri=${encodeURIComponent("https://plugin.local/oauth/callback")}&state=s`,
      ),
      workerEnv,
    );
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Test Workspace");
    const refused = await fakeSlackWorker.fetch(
      new Request(`${BASE}/oauth/v2/authorize?client_id=9.9&redirect_uri=${encodeURIComponent("https://x.test/cb")}`),
      workerEnv,
    );
    expect(refused.status).toBe(400);
    const triggered = await fakeSlackWorker.fetch(
      new Request(`${BASE}/__fake/trigger`, {
        method: "POST",
        body: JSON.stringify({ kind: "message", teamId: "T0TEST" }),
        headers: { "content-type": "application/json" },
      }),
      workerEnv,
    );
    expect(triggered.status).toBe(200);
    expect(received).toHaveLength(1);
    const body = await received[0]!.text();
    const check = await verifyWorkspaceSignature(
      "worker-signing",
      received[0]!.headers.get("x-slack-request-timestamp"),
      received[0]!.headers.get("x-slack-signature"),
      body,
    );
    expect(check.ok).toBe(true);
    // The same env object keeps its state: a retry resends that event.
    await fakeSlackWorker.fetch(
      new Request(`${BASE}/__fake/trigger`, {
        method: "POST",
        body: JSON.stringify({ retry: 1 }),
        headers: { "content-type": "application/json" },
      }),
      workerEnv,
    );
    expect(JSON.parse(await received[1]!.text()).event_id).toBe(JSON.parse(body).event_id);
  });
});

// Interactivity as Slack runs it (docs.slack.dev interactivity, views.open, chat.postEphemeral, token rotation).
describe("fake Slack: block actions, views, ephemeral messages, token rotation", () => {
  async function world(overrides: Partial<FakeWorkspaceConfig> = {}) {
    const deliveries: { request: Request; body: string }[] = [];
    let clock = 1_800_000_000_000;
    const slack = fake({
      now: () => clock,
      deliver: async (request) => {
        deliveries.push({ request, body: await request.clone().text() });
        return new Response(null, { status: 200 });
      },
      ...overrides,
    });
    const { access_token } = await install(slack);
    const method = async (name: string, params: Record<string, unknown>) =>
      (await (await api(slack, name, access_token, params)).json()) as Record<string, any>;
    const trigger = async (params: Record<string, unknown>) =>
      (
        await slack.fetch(
          new Request(`${BASE}/__fake/trigger`, {
            method: "POST",
            body: JSON.stringify(params),
            headers: { "content-type": "application/json" },
          }),
        )
      ).json() as Promise<Record<string, any>>;
    return {
      slack,
      method,
      trigger,
      deliveries,
      advance: (ms: number) => (clock += ms),
      token: access_token as string,
    };
  }
  const buttons = {
    type: "actions",
    elements: [
      { type: "button", action_id: "approve:1", text: { type: "plain_text", text: "Approve" }, value: "1" },
      { type: "button", text: { type: "plain_text", text: "No id" } },
    ],
  };
  const view = {
    type: "modal",
    callback_id: "why",
    title: { type: "plain_text", text: "Why?" },
    submit: { type: "plain_text", text: "Send" },
    blocks: [
      {
        type: "input",
        block_id: "b",
        label: { type: "plain_text", text: "Reason" },
        element: { type: "plain_text_input", action_id: "reason" },
      },
      {
        type: "input",
        optional: true,
        label: { type: "plain_text", text: "Env" },
        element: {
          type: "static_select",
          action_id: "env",
          options: [{ text: { type: "plain_text", text: "Prod" }, value: "prod" }],
        },
      },
    ],
  };

  it("a click is a block_actions payload in a signed form body; the button without action_id got one from Slack", async () => {
    const { method, trigger, deliveries } = await world();
    const posted = await method("chat.postMessage", { channel: "C0GENERAL", text: "Deploy?", blocks: [buttons] });
    const generated = posted.message.blocks[0].elements[1].action_id;
    expect(generated).toMatch(/^[0-9a-f]{6}$/);
    const out = await trigger({ kind: "action", actionId: "approve:1" });
    const { request, body } = deliveries[0]!;
    expect(request.headers.get("content-type")).toBe("application/x-www-form-urlencoded");
    const check = await verifyWorkspaceSignature(
      CONFIG.signingSecret,
      request.headers.get("x-slack-request-timestamp"),
      request.headers.get("x-slack-signature"),
      new TextEncoder().encode(body),
      1_800_000_000,
    );
    expect(check.ok).toBe(true);
    const payload = JSON.parse(new URLSearchParams(body).get("payload")!);
    expect(payload).toEqual(out.delivered);
    expect(payload).toMatchObject({
      type: "block_actions",
      team: { id: "T0TEST" },
      user: { id: "U0ALICE", name: "alice" },
      container: { type: "message", message_ts: posted.ts, channel_id: "C0GENERAL" },
      trigger_id: expect.stringMatching(/^\d+\.\d+\.[0-9a-f]+$/),
      actions: [{ type: "button", action_id: "approve:1", value: "1", block_id: expect.any(String) }],
    });
    expect((await trigger({ kind: "action", actionId: generated })).delivered.actions[0].action_id).toBe(generated);
    expect((await trigger({ kind: "action", actionId: "nope" })).error).toMatch(
      /No message in workspace T0TEST has an element with action_id "nope"/,
    );
    expect((await trigger({ kind: "action", actionId: "approve:1", value: "2" })).error).toBe(
      "A button sends its own value: --value is for a select.",
    );
  });

  it("views.open takes the click's trigger_id within 3 seconds, once; an unknown one is invalid_trigger_id", async () => {
    const { method, trigger, advance } = await world();
    await method("chat.postMessage", { channel: "C0GENERAL", text: "x", blocks: [buttons] });
    const late = (await trigger({ kind: "action", actionId: "approve:1" })).delivered.trigger_id;
    advance(3_001);
    expect(await method("views.open", { trigger_id: late, view })).toEqual({ ok: false, error: "expired_trigger_id" });
    const fresh = (await trigger({ kind: "action", actionId: "approve:1" })).delivered.trigger_id;
    const opened = await method("views.open", { trigger_id: fresh, view });
    expect(opened).toMatchObject({ ok: true, view: { id: expect.stringMatching(/^V0/), callback_id: "why" } });
    expect(await method("views.open", { trigger_id: fresh, view })).toEqual({ ok: false, error: "expired_trigger_id" });
    expect(await method("views.open", { trigger_id: "1.2.3", view })).toEqual({
      ok: false,
      error: "invalid_trigger_id",
    });
  });

  it.each([
    [
      { ...view, title: { type: "plain_text", text: "x".repeat(25) } },
      "[ERROR] view.title: must be between 1 and 24 characters",
    ],
    [{ ...view, submit: undefined }, "[ERROR] view.submit: required when the view has input blocks"],
    [{ ...view, type: "home" }, "[ERROR] view.type: must be modal"],
  ])("views.open refuses a view Slack refuses: %#", async (bad, message) => {
    const { method, trigger } = await world();
    await method("chat.postMessage", { channel: "C0GENERAL", text: "x", blocks: [buttons] });
    const triggerId = (await trigger({ kind: "action", actionId: "approve:1" })).delivered.trigger_id;
    expect(await method("views.open", { trigger_id: triggerId, view: bad })).toEqual({
      ok: false,
      error: "invalid_arguments",
      response_metadata: { messages: [message] },
    });
  });

  it("a submit is a view_submission with state values by block and action id; required inputs and known options only", async () => {
    const { method, trigger, slack } = await world();
    await method("chat.postMessage", { channel: "C0GENERAL", text: "x", blocks: [buttons] });
    const triggerId = (await trigger({ kind: "action", actionId: "approve:1" })).delivered.trigger_id;
    await method("views.open", { trigger_id: triggerId, view: { ...view, private_metadata: "run-1" } });
    expect((await trigger({ kind: "view", callbackId: "why", fields: { env: "prod" } })).error).toBe(
      "The input reason is required.",
    );
    expect((await trigger({ kind: "view", callbackId: "why", fields: { reason: "x", env: "dev" } })).error).toBe(
      '"dev" is not an option of env.',
    );
    expect((await trigger({ kind: "view", callbackId: "why", fields: { reason: "x", other: "y" } })).error).toMatch(
      /The view has no input other/,
    );
    const chat = (await (await slack.fetch(new Request(`${BASE}/__fake/chat`))).json()) as any;
    expect(chat.forms).toEqual([
      {
        id: "why",
        title: "Why?",
        submitLabel: "Send",
        channelId: null,
        fields: [
          { id: "reason", label: "Reason", style: "short", required: true, placeholder: null, value: null },
          {
            id: "env",
            label: "Env",
            style: "select",
            required: false,
            placeholder: null,
            value: null,
            options: [{ label: "Prod", value: "prod" }],
          },
        ],
      },
    ]);
    const out = await trigger({ kind: "view", callbackId: "why", fields: { reason: "Friday", env: "prod" } });
    expect(out.delivered).toMatchObject({
      type: "view_submission",
      view: {
        callback_id: "why",
        private_metadata: "run-1",
        state: {
          values: {
            b: { reason: { type: "plain_text_input", value: "Friday" } },
            [Object.keys(out.delivered.view.state.values)[1]!]: {
              env: {
                type: "static_select",
                selected_option: { text: { type: "plain_text", text: "Prod" }, value: "prod" },
              },
            },
          },
        },
      },
    });
    // Answered with an empty 200: the view closed.
    expect(((await (await slack.fetch(new Request(`${BASE}/__fake/chat`))).json()) as any).forms).toEqual([]);
  });

  it("chat.postEphemeral: only the user it names sees it; chat.update cannot touch it", async () => {
    const { method } = await world();
    expect(await method("chat.postEphemeral", { channel: "C0GENERAL", user: "U0BOB", text: "x" })).toEqual({
      ok: false,
      error: "user_not_in_channel",
    });
    const sent = await method("chat.postEphemeral", { channel: "C0GENERAL", user: "U0ALICE", text: "psst" });
    expect(sent).toEqual({ ok: true, message_ts: expect.any(String) });
    expect(await method("chat.update", { channel: "C0GENERAL", ts: sent.message_ts, text: "x" })).toEqual({
      ok: false,
      error: "message_not_found",
    });
  });

  it("token rotation switched on mid-way: the next install gets an expiring pair; a refused refresh answers the chosen error once", async () => {
    const { slack } = await world();
    const switched = await slack.fetch(
      new Request(`${BASE}/__fake/token-rotation`, {
        method: "POST",
        body: JSON.stringify({ enabled: true, expiresIn: 2 }),
        headers: { "content-type": "application/json" },
      }),
    );
    expect(await switched.json()).toEqual({ ok: true, rotation: { enabled: true, expiresIn: 2 } });
    const tokens = await install(slack);
    expect(tokens).toMatchObject({
      access_token: expect.stringMatching(/^xoxe\.xoxb-/),
      expires_in: 2,
      refresh_token: expect.stringMatching(/^xoxe-1-/),
    });
    await slack.fetch(
      new Request(`${BASE}/__fake/refuse-refresh`, {
        method: "POST",
        body: JSON.stringify({ error: "invalid_refresh_token" }),
        headers: { "content-type": "application/json" },
      }),
    );
    expect(await exchange(slack, { grant_type: "refresh_token", refresh_token: tokens.refresh_token })).toEqual({
      ok: false,
      error: "invalid_refresh_token",
    });
  });
});
