import { describe, expect, it } from "vitest";
import fakeSlackWorker, { type FakeWorkspaceEnv } from "#src/dev/fakes/workspace/index.ts";
import { verifyWorkspaceSignature } from "#src/plugins/workspace/workspaceSignature.ts";
import { BASE, REDIRECT, CONFIG, fake, basic, consent, exchange, install, api } from "./fakeWorkspace.fixture.ts";

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
    const check = await verifyWorkspaceSignature("worker-signing", {
      timestampHeader: received[0]!.headers.get("x-slack-request-timestamp"),
      signatureHeader: received[0]!.headers.get("x-slack-signature"),
      rawBody: body,
    });
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
