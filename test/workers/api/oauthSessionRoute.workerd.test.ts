import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { INSTALLABLE_PLUGINS, isInstallable, PLUGINS } from "#src/contracts/pluginRegistry.ts";
import type { ApiEnv } from "#src/workers/api/env.ts";
import { upsertConnection } from "#src/workers/db/connectionsStore.ts";
import { claimResource } from "#src/workers/db/resourceClaims.ts";
import { consumeSessionCode } from "#src/plugins/kit/sessionCodes.ts";
import { apiHarness, callApi, createProject, expectError, userWithProject } from "#test/support/workerd/index.ts";
import { healthyConnectionSummary, TOKEN_ENCRYPTION_KEY } from "#test/support/workerd/index.ts";

const apiEnv = () =>
  apiHarness({
    env: { CHATSERVER_PLUGIN_URL: "https://chat.plugins.test/", WORKSPACE_PLUGIN_URL: "https://ws.plugins.test" },
  }).env;

describe("POST /oauth/session", () => {
  it("issues a 2-minute code bound to the plugin and project, with the plugin's install URL", async () => {
    const { user, row } = await userWithProject("ada@example.com", "alpha");
    const before = Date.now();
    const response = await callApi("POST", "/oauth/session", {
      token: user.token,
      body: { project: "alpha", plugin: "chatserver" },
      env: apiEnv(),
    });
    const after = Date.now();
    expect(response.status, await response.clone().text()).toBe(201);
    const body = (await response.json()) as { code: string; expiresAt: string; installUrl: string };
    expect(body.code).toMatch(/^[0-9a-f]{64}$/);
    expect(body.installUrl).toBe(`https://chat.plugins.test/install?code=${body.code}`);
    const expires = Date.parse(body.expiresAt);
    // Two minutes from the moment the route ran, which lies between `before` and `after`.
    expect(expires).toBeGreaterThanOrEqual(before + 120_000);
    expect(expires).toBeLessThanOrEqual(after + 120_000);
    expect(await consumeSessionCode(env, body.code, "workspace")).toEqual({ ok: false, reason: "wrong_plugin" });
    expect(await consumeSessionCode(env, body.code, "chatserver")).toEqual({
      ok: true,
      projectId: row.id,
      userId: user.id,
      pluginId: "chatserver",
    });
    expect(await consumeSessionCode(env, body.code, "chatserver")).toEqual({ ok: false, reason: "used" });
  });

  it.each(INSTALLABLE_PLUGINS.map((plugin) => [plugin.id, plugin.install.urlVar] as const))(
    "links %s's install under the URL in %s, and answers not_ready naming it when it is unset",
    async (plugin, urlVar) => {
      const { user } = await userWithProject("ada@example.com", "alpha");
      const base = `https://${plugin}.plugins.test`;
      const call = (env: Partial<ApiEnv>) =>
        callApi("POST", "/oauth/session", {
          token: user.token,
          body: { project: "alpha", plugin },
          env: apiHarness({ env }).env,
        });
      const response = await call({ [urlVar]: base });
      expect(response.status).toBe(201);
      const { code, installUrl } = (await response.json()) as { code: string; installUrl: string };
      expect(installUrl).toBe(`${base}/install?code=${code}`);
      const error = await expectError(await call({}), 503, "not_ready");
      expect(error.error.message).toBe(
        `The ${plugin} plugin is not configured on this platform (${urlVar} is not set).`,
      );
    },
  );

  it.each(PLUGINS.filter((plugin) => !isInstallable(plugin)).map((plugin) => [plugin.id, plugin.install] as const))(
    "refuses %s, which needs no install, saying what to do instead",
    async (plugin, { instead }) => {
      const { user } = await userWithProject("ada@example.com", "alpha");
      const response = await callApi("POST", "/oauth/session", {
        token: user.token,
        body: { project: "alpha", plugin },
        env: apiEnv(),
      });
      const error = await expectError(response, 400, "invalid_input");
      expect(error.error.message).toBe(`The ${plugin} plugin needs no install: ${instead}.`);
    },
  );

  it.each([
    ["an unknown plugin", { project: "alpha", plugin: "fax" }, 400, "invalid_input", /chatserver.*workspace/],
    ["a missing project", { plugin: "workspace" }, 400, "invalid_input", /project/],
    ["another user's project", { project: "beta", plugin: "workspace" }, 404, "not_found", /No project named "beta"/],
  ] as const)("refuses %s", async (_name, body, status, code, message) => {
    const { user } = await userWithProject("ada@example.com", "alpha");
    const bob = await userWithProject("bob@example.com", "beta");
    expect(bob.row.slug).toBe("beta");
    const error = await expectError(
      await callApi("POST", "/oauth/session", { token: user.token, body, env: apiEnv() }),
      status,
      code,
    );
    expect(error.error.message).toMatch(message);
  });

  it("requires a CLI token", async () => {
    await userWithProject("ada@example.com", "alpha");
    await expectError(
      await callApi("POST", "/oauth/session", { body: { project: "alpha", plugin: "chatserver" }, env: apiEnv() }),
      401,
      "unauthorized",
    );
  });
});

describe("GET /projects/:slug/plugins", () => {
  it("lists connections (never a token) and claimed resources", async () => {
    const { user, row } = await userWithProject("ada@example.com", "alpha");
    await createProject(user.token, "other");
    let response = await callApi("GET", "/projects/alpha/plugins", { token: user.token });
    expect(await response.json()).toEqual({ connections: [], resources: [] });

    await upsertConnection(env.DB, TOKEN_ENCRYPTION_KEY, {
      pluginId: "workspace",
      projectId: row.id,
      externalUserId: "T1",
      accessToken: "xoxb-top-secret",
      refreshToken: "xoxe-refresh",
      tokenExpiresAt: Date.UTC(2030, 0, 1),
    });
    await claimResource(env.DB, {
      pluginId: "workspace",
      resourceType: "workspace",
      projectId: row.id,
      externalResourceId: "T1",
      displayName: "Team One",
    });
    response = await callApi("GET", "/projects/alpha/plugins", { token: user.token });
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(text).not.toMatch(/xox|v1\./);
    expect(JSON.parse(text)).toEqual({
      connections: [healthyConnectionSummary("workspace", "T1", "2030-01-01T00:00:00.000Z")],
      resources: [
        {
          plugin: "workspace",
          type: "workspace",
          externalId: "T1",
          displayName: "Team One",
          claimedAt: expect.any(String),
        },
      ],
    });
    expect(await (await callApi("GET", "/projects/other/plugins", { token: user.token })).json()).toEqual({
      connections: [],
      resources: [],
    });
  });

  it("answers another user's project like a missing one", async () => {
    await userWithProject("ada@example.com", "alpha");
    const bob = await userWithProject("bob@example.com", "beta");
    await expectError(await callApi("GET", "/projects/alpha/plugins", { token: bob.user.token }), 404, "not_found");
  });
});
