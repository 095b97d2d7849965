import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { clearConnectionError, deleteConnection, listConnectionSummaries } from "#src/workers/db/connectionsStore.ts";
import { markConnectionNeedsReconnect, markConnectionRevoked } from "#src/workers/db/connectionsStore.ts";
import { markConnectionsRevokedForExternalUser, readConnection } from "#src/workers/db/connectionsStore.ts";
import { upsertConnection } from "#src/workers/db/connectionsStore.ts";
import { clearPluginProblem, recordPluginProblem } from "#src/workers/db/pluginProblems.ts";
import { healthyConnectionSummary, TOKEN_ENCRYPTION_KEY, twoProjects } from "#test/support/workerd/index.ts";

describe("connectionsStore", () => {
  it("keeps one connection per plugin and project: a reinstall replaces it and clears revoked", async () => {
    const { a } = await twoProjects();
    await upsertConnection(env.DB, TOKEN_ENCRYPTION_KEY, {
      pluginId: "chatserver",
      projectId: a.id,
      externalUserId: "u1",
      accessToken: "at1",
      refreshToken: "rt1",
      tokenExpiresAt: 5000,
    });
    const stored = await env.DB.prepare("SELECT access_token, refresh_token FROM plugin_oauth_connections").first<{
      access_token: string;
      refresh_token: string;
    }>();
    expect(stored!.access_token).toMatch(/^v1\./);
    expect(stored!.refresh_token).toMatch(/^v1\./);

    expect(await markConnectionRevoked(env.DB, "chatserver", a.id)).toBe(true);
    expect((await readConnection(env.DB, TOKEN_ENCRYPTION_KEY, "chatserver", a.id))!.revokedAt).not.toBeNull();

    await upsertConnection(env.DB, TOKEN_ENCRYPTION_KEY, {
      pluginId: "chatserver",
      projectId: a.id,
      externalUserId: "u2",
      accessToken: "at2",
    });
    const connection = await readConnection(env.DB, TOKEN_ENCRYPTION_KEY, "chatserver", a.id);
    expect(connection).toMatchObject({
      externalUserId: "u2",
      accessToken: "at2",
      refreshToken: null,
      tokenExpiresAt: null,
      revokedAt: null,
    });
    expect((await env.DB.prepare("SELECT COUNT(*) AS n FROM plugin_oauth_connections").first<{ n: number }>())!.n).toBe(
      1,
    );

    const summaries = await listConnectionSummaries(env.DB, a.id);
    expect(summaries).toEqual([healthyConnectionSummary("chatserver", "u2")]);
    expect(JSON.stringify(summaries)).not.toContain("at2");

    expect(await markConnectionsRevokedForExternalUser(env.DB, "chatserver", "u2")).toBe(1);
    expect(await readConnection(env.DB, TOKEN_ENCRYPTION_KEY, "workspace", a.id)).toBeNull();
  });

  it("health: a refusal marks needs_reconnect with the error and time; a success or a reinstall clears it; revoked wins", async () => {
    const { a } = await twoProjects();
    const connect = () =>
      upsertConnection(env.DB, TOKEN_ENCRYPTION_KEY, {
        pluginId: "workspace",
        projectId: a.id,
        externalUserId: "T1",
        accessToken: "xoxb-1",
      });
    const state = async () => (await listConnectionSummaries(env.DB, a.id))[0]!;
    await connect();
    expect(await state()).toMatchObject({ status: "active", lastError: null, lastErrorAt: null });

    await markConnectionNeedsReconnect(
      env.DB,
      { pluginId: "workspace", projectId: a.id },
      "token_revoked",
      Date.UTC(2030, 0, 1),
    );
    expect(await state()).toMatchObject({
      status: "needs_reconnect",
      lastError: "token_revoked",
      lastErrorAt: "2030-01-01T00:00:00.000Z",
    });
    await clearConnectionError(env.DB, "workspace", a.id);
    expect(await state()).toMatchObject({ status: "active", lastError: null });

    await markConnectionNeedsReconnect(env.DB, { pluginId: "workspace", projectId: a.id }, "invalid_auth");
    await connect(); // a reinstall
    expect(await state()).toMatchObject({ status: "active", lastError: null });

    await markConnectionRevoked(env.DB, "workspace", a.id);
    await markConnectionNeedsReconnect(env.DB, { pluginId: "workspace", projectId: a.id }, "invalid_auth"); // a revoked one stays revoked
    expect(await state()).toMatchObject({ status: "revoked", lastError: null });

    expect(await deleteConnection(env.DB, "workspace", a.id)).toBe(true);
    expect(await deleteConnection(env.DB, "workspace", a.id)).toBe(false);
    expect(await listConnectionSummaries(env.DB, a.id)).toEqual([]);
  });

  it("a plugin's own problem makes every project's connection of that plugin degraded (not another plugin's); a token refusal or a revoke outranks it", async () => {
    const { a, b } = await twoProjects();
    for (const [pluginId, projectId] of [
      ["chatserver", a.id],
      ["chatserver", b.id],
      ["workspace", a.id],
    ] as const) {
      await upsertConnection(env.DB, TOKEN_ENCRYPTION_KEY, {
        pluginId,
        projectId,
        externalUserId: "u",
        accessToken: "t",
      });
    }
    const state = async (projectId: number, plugin = "chatserver") =>
      (await listConnectionSummaries(env.DB, projectId)).find((c) => c.plugin === plugin)!;
    const intents = { code: "close_4014", cause: "refused: close 4014", fix: "Enable the Message Content intent." };
    await recordPluginProblem(
      env.DB,
      { pluginId: "chatserver", source: "gateway shard 0 of 1", problem: intents },
      Date.UTC(2030, 0, 1),
    );
    for (const project of [a, b]) {
      expect(await state(project.id)).toMatchObject({
        status: "degraded",
        problem: { ...intents, since: "2030-01-01T00:00:00.000Z" },
      });
    }
    expect(await state(a.id, "workspace")).toMatchObject({ status: "active", problem: null });

    // The same problem again keeps its start; another one starts anew.
    await recordPluginProblem(
      env.DB,
      { pluginId: "chatserver", source: "gateway shard 0 of 1", problem: intents },
      Date.UTC(2030, 0, 2),
    );
    expect((await state(a.id)).problem?.since).toBe("2030-01-01T00:00:00.000Z");
    const limit = { code: "session_starts_used_up", cause: "used up", fix: "wait" };
    await recordPluginProblem(
      env.DB,
      { pluginId: "chatserver", source: "gateway shard 0 of 1", problem: limit },
      Date.UTC(2030, 0, 3),
    );
    expect((await state(a.id)).problem).toMatchObject({
      code: "session_starts_used_up",
      since: "2030-01-03T00:00:00.000Z",
    });
    // Of two sources, the one that began first.
    await recordPluginProblem(
      env.DB,
      { pluginId: "chatserver", source: "gateway shard 1 of 2", problem: intents },
      Date.UTC(2029, 11, 31),
    );
    expect((await state(a.id)).problem).toMatchObject({ code: "close_4014" });

    await markConnectionNeedsReconnect(env.DB, { pluginId: "chatserver", projectId: a.id }, "401: Unauthorized");
    expect(await state(a.id)).toMatchObject({ status: "needs_reconnect" });
    await markConnectionRevoked(env.DB, "chatserver", b.id);
    expect(await state(b.id)).toMatchObject({ status: "revoked" });

    await clearPluginProblem(env.DB, "chatserver", "gateway shard 0 of 1");
    await clearPluginProblem(env.DB, "chatserver", "gateway shard 1 of 2");
    await clearConnectionError(env.DB, "chatserver", a.id);
    expect(await state(a.id)).toMatchObject({ status: "active", problem: null });
  });
});
