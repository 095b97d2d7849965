import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";

describe("D1 schema", () => {
  it("creates the plugin tables and the platform's own", async () => {
    const { results } = await env.DB.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all<{
      name: string;
    }>();
    const names = results.map((r) => r.name);
    for (const table of [
      "users",
      "cli_tokens",
      "projects",
      "project_crons",
      "plugin_oauth_connections",
      "plugin_resources",
      "plugin_problems",
    ]) {
      expect(names).toContain(table);
    }
  });

  it("lets one external resource belong to at most one project (unique constraint, not code)", async () => {
    const now = Date.now();
    await env.DB.prepare("INSERT INTO users (id, email, created_at) VALUES (1, 'a@x.io', ?)").bind(now).run();
    for (const [id, slug] of [
      [1, "one"],
      [2, "two"],
    ] as const) {
      await env.DB.prepare(
        "INSERT INTO projects (id, slug, owner_id, worker_secret, script_name, created_at, updated_at) VALUES (?, ?, 1, ?, ?, ?, ?)",
      )
        .bind(id, slug, "a".repeat(64), `proj-${slug}`, now, now)
        .run();
    }
    const claim = (projectId: number) =>
      env.DB.prepare(
        "INSERT INTO plugin_resources (plugin_id, resource_type, project_id, external_resource_id, display_name, created_at) VALUES ('workspace', 'workspace', ?, 'T123', 'Team', ?)",
      )
        .bind(projectId, now)
        .run();
    await claim(1);
    await expect(claim(2)).rejects.toThrow(/UNIQUE constraint failed/);
  });

  it("keeps one OAuth connection per plugin per project", async () => {
    const now = Date.now();
    await env.DB.prepare("INSERT INTO users (id, email, created_at) VALUES (1, 'a@x.io', ?)").bind(now).run();
    await env.DB.prepare(
      "INSERT INTO projects (id, slug, owner_id, worker_secret, script_name, created_at, updated_at) VALUES (1, 'one', 1, ?, 'proj-one', ?, ?)",
    )
      .bind("a".repeat(64), now, now)
      .run();
    const connect = () =>
      env.DB.prepare(
        "INSERT INTO plugin_oauth_connections (plugin_id, project_id, external_user_id, access_token, created_at, updated_at) VALUES ('chatserver', 1, 'u', 'enc', ?, ?)",
      )
        .bind(now, now)
        .run();
    await connect();
    await expect(connect()).rejects.toThrow(/UNIQUE constraint failed/);
  });

  it("refuses a worker secret that is not 32 bytes of hex", async () => {
    const now = Date.now();
    await env.DB.prepare("INSERT INTO users (id, email, created_at) VALUES (1, 'a@x.io', ?)").bind(now).run();
    await expect(
      env.DB.prepare(
        "INSERT INTO projects (slug, owner_id, worker_secret, script_name, created_at, updated_at) VALUES ('short', 1, 'abc', 'proj-short', ?, ?)",
      )
        .bind(now, now)
        .run(),
    ).rejects.toThrow(/CHECK constraint failed/);
  });
});
