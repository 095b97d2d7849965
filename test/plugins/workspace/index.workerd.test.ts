/**
 * The workspace-chat plugin worker against the fake Slack, in workerd: the install flow, and the
 * events a project's build metadata lists.
 */
import { createExecutionContext, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import workspacePlugin from "#src/plugins/workspace/index.ts";
import { platformRuntime } from "#src/runtime/entry/platformRuntime.ts";
import { resetWorkspaceHandlers, workspace } from "#src/runtime/plugins/workspace.ts";
import { userWithProject } from "#test/support/workerd/index.ts";
import { PLUGIN_ORIGIN, setup, installUrl, consent, install, installedProject } from "./index.fixture.ts";

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
