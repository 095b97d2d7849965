// Uninstalling the workspace-chat plugin through the API worker (which calls the plugin's /uninstall),
// and the connection's health.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { callApi, expectError, signedRequest, userWithProject } from "#test/support/workerd/index.ts";
import { PLUGIN_ORIGIN, setup, install, installedProject, proxy, apiFor } from "./index.fixture.ts";
import { fakeControl } from "./index.fixture.ts";
import { uninstall, pluginsOf } from "./index.fixture.ts";

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
    await fakeControl(t.slack, "revoke", { teamId: "T0TEST" });
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
