// The workspace-chat plugin's proxy routes as a project calls them, token refresh (also when Slack
// says token_expired early), and a reinstall recovering a lease.
import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { ProjectRow } from "#src/workers/db/projectsTable.ts";
import { expectError, signedRequest, userWithProject } from "#test/support/workerd/index.ts";
import { PLUGIN_ORIGIN, SLACK_ORIGIN, setup, install, installedProject, proxy } from "./index.fixture.ts";
import { fakeControl, pluginsOf } from "./index.fixture.ts";

/** The project's plain message to #general, as the refusal tests send it. */
const sendX = (t: ReturnType<typeof setup>, row: ProjectRow) =>
  proxy(t, row, "send-message", { channel: "C0GENERAL", text: "x" });

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
    const body = await expectError(await sendX(t, row), 404, "not_found");
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

    await fakeControl(t.slack, "revoke", { teamId: "T0TEST" });
    const revoked = await expectError(await sendX(t, row), 409, "revoked");
    expect(revoked.error.message).toContain("token_revoked");
    expect(revoked.error.message).toContain("reconnect");

    // invalid_auth: the stored token is one Slack does not know.
    const t2 = setup();
    const other = await installedProject(t2, "bob@example.com", "bob-app", "T0OTHER");
    await t2.slack.fetch(new Request(`${SLACK_ORIGIN}/__fake/reset`, { method: "POST" }));
    const invalid = await expectError(await sendX(t2, other.row), 409, "revoked");
    expect(invalid.error.message).toContain("invalid_auth");
  });

  it("Slack's 429 becomes our 429 with Slack's Retry-After", async () => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    await fakeControl(t.slack, "ratelimit", { retryAfter: 17, count: 1 });
    const limited = await sendX(t, row);
    expect(limited.headers.get("retry-after")).toBe("17");
    const body = await expectError(limited, 429, "rate_limited");
    expect(body.error.message).toContain("Slack is rate limiting");
    expect((await sendX(t, row)).status).toBe(200);
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

  it("under platform dev a local project is a private deployment: no proxy rate, and one note when deployed it would be refused", async () => {
    const t = setup({ vars: { LOCAL_PROJECTS_PRIVATE: "1" } });
    const { user } = await userWithProject("ada@example.com", "local-app");
    expect((await install(t, user, "local-app")).status).toBe(200);
    const row = (await env.DB.prepare("SELECT * FROM projects WHERE slug = 'local-app'").first<ProjectRow>())!;
    expect(row.private).toBe(0);
    const logged = vi.spyOn(console, "log");
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await proxy(t, row, "send-message", { channel: "C0GENERAL", text: `n${i}` })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
    expect(t.slack.recorded).toHaveLength(6);
    const notes = logged.mock.calls.map((call) => String(call[0])).filter((line) => line.startsWith("Note: deployed"));
    logged.mockRestore();
    expect(notes).toEqual([
      "Note: deployed as a public project this would be refused (429 rate_limited: 3 plugin actions per 60 seconds). Local projects run as private deployments, which have no proxy rate; `platform dev --public` applies the public limits.",
    ]);
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
    expect((await sendX(t, row)).status).toBe(200);
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
    await fakeControl(t.slack, "revoke", { teamId: "T0TEST" });
    await expire(row);
    const body = await expectError(await sendX(t, row), 409, "revoked");
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
    await fakeControl(t.slack, "refuse-refresh", { error: "invalid_refresh_token" });
    const body = await expectError(await sendX(t, row), 409, "revoked");
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

describe("reinstall and lease recovery", () => {
  it("after app_uninstalled, reinstalling the app makes proxy calls work again", async () => {
    const t = setup();
    const { user, row } = await installedProject(t, "ada@example.com", "ada-app");
    await t.trigger({ kind: "app_uninstalled", teamId: "T0TEST" });
    await expectError(await sendX(t, row), 409, "revoked");
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
    expect((await sendX(t, row)).status).toBe(200);
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
    await fakeControl(t.slack, "expire", { teamId: "T0TEST" });
    const response = await sendX(t, row);
    expect(response.status, await response.clone().text()).toBe(200);
    expect(t.slack.recorded.map((c) => c.error ?? "ok")).toEqual(["token_expired", "ok"]);
    expect(t.slackRequests.filter((r) => r.body.includes("grant_type=refresh_token"))).toHaveLength(1);
  });
});
