import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  listConnectionSummaries,
  markConnectionRevoked,
  markConnectionsRevokedForExternalUser,
  readConnection,
  upsertConnection,
} from "../../../src/platform/db/connectionsStore.ts";
import { TOKEN_ENCRYPTION_KEY, twoProjects } from "../../support/workerd/index.ts";

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
    expect(summaries).toEqual([
      {
        plugin: "chatserver",
        externalUserId: "u2",
        connectedAt: expect.any(String),
        tokenExpiresAt: null,
        revoked: false,
        revokedAt: null,
      },
    ]);
    expect(JSON.stringify(summaries)).not.toContain("at2");

    expect(await markConnectionsRevokedForExternalUser(env.DB, "chatserver", "u2")).toBe(1);
    expect(await readConnection(env.DB, TOKEN_ENCRYPTION_KEY, "workspace", a.id)).toBeNull();
  });
});
