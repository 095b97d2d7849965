/**
 * CLI token authentication on every project route (and the dev-only ones): a missing, malformed,
 * unknown, altered or expired token is 401 and writes nothing; the token is checked before the body.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import devApi from "#src/dev/routes/devApiWorker.ts";
import { callApi, countRows, createProject, createUserWithToken, expectError } from "#test/support/workerd/index.ts";
import { userWithProject } from "#test/support/workerd/index.ts";

describe("CLI token authentication", () => {
  const routes = [
    { method: "GET", path: "/projects", body: undefined },
    { method: "POST", path: "/projects", body: { slug: "shop" } },
    { method: "GET", path: "/projects/shop", body: undefined },
    { method: "PUT", path: "/projects/shop/metadata", body: { crons: [] } },
    // What the console reads and does (its page is public static files; its data is these routes).
    { method: "GET", path: "/projects/shop/plugins", body: undefined },
    { method: "GET", path: "/projects/shop/workflows?status=running", body: undefined },
    { method: "GET", path: "/projects/shop/workflows/abc.def", body: undefined },
    { method: "POST", path: "/projects/shop/workflows", body: { name: "checkout", data: {} } },
    { method: "POST", path: "/projects/shop/crons/__workflow-recovery/run", body: undefined },
    // Dev-only routes, in the API worker `platform dev` runs (src/dev/routes/devApiWorker.ts).
    {
      method: "POST",
      path: "/projects/shop/plugins/chatserver/test-events",
      body: { kind: "message", text: "hi" },
      dev: true,
    },
    { method: "PUT", path: "/projects/shop/local", body: { private: true }, dev: true },
  ] as const;

  const cases: { name: string; authorization: (valid: string) => string | undefined; message: RegExp }[] = [
    { name: "missing token", authorization: () => undefined, message: /Missing CLI token/ },
    { name: "Bearer with nothing after it", authorization: () => "Bearer", message: /Missing CLI token/ },
    { name: "non-Bearer scheme", authorization: (t) => `Token ${t}`, message: /Missing CLI token/ },
    { name: "malformed (too short)", authorization: () => "Bearer plt_short", message: /Invalid CLI token/ },
    {
      name: "malformed (wrong prefix)",
      authorization: (t) => `Bearer xyz_${t.slice(4)}`,
      message: /Invalid CLI token/,
    },
    {
      name: "malformed (bad characters)",
      authorization: () => `Bearer plt_${"+".repeat(43)}`,
      message: /Invalid CLI token/,
    },
    { name: "malformed (one char too long)", authorization: (t) => `Bearer ${t}A`, message: /Invalid CLI token/ },
    { name: "unknown token", authorization: () => `Bearer plt_${"A".repeat(43)}`, message: /Invalid CLI token/ },
    {
      name: "valid token with one character changed",
      authorization: (t) => `Bearer ${t.slice(0, -1)}${t.endsWith("A") ? "B" : "A"}`,
      message: /Invalid CLI token/,
    },
  ];

  for (const route of routes) {
    it.each(cases)(`${route.method} ${route.path}: $name → 401`, async ({ authorization, message }) => {
      const owner = await userWithProject("owner@example.com", "other");
      const header = authorization(owner.user.token);
      const projectsBefore = await countRows("projects");
      const response = await callApi(route.method, route.path, {
        headers: header === undefined ? {} : { authorization: header },
        body: route.body,
        ...("dev" in route ? { worker: devApi } : {}),
      });
      const body = await expectError(response, 401, "unauthorized");
      expect(body.error.message).toMatch(message);
      expect(await countRows("projects")).toBe(projectsBefore);
      expect(await countRows("project_crons")).toBe(0);
    });

    it(`${route.method} ${route.path}: an expired token → 401 and nothing written`, async () => {
      const user = await createUserWithToken("old@example.com");
      await createProject(user.token, "shop");
      await env.DB.prepare("UPDATE cli_tokens SET expires_at = ?")
        .bind(Date.now() - 1000)
        .run();
      const response = await callApi(route.method, route.path, {
        token: user.token,
        body: route.body,
        ...("dev" in route ? { worker: devApi } : {}),
      });
      const body = await expectError(response, 401, "unauthorized");
      expect(body.error.message).toMatch(/expired/);
      expect(await countRows("projects")).toBe(1);
      expect(await countRows("project_crons")).toBe(0);
    });
  }

  it("accepts a token whose expiry is still in the future", async () => {
    const user = await createUserWithToken("fresh@example.com");
    await env.DB.prepare("UPDATE cli_tokens SET expires_at = ?")
      .bind(Date.now() + 60_000)
      .run();
    expect((await callApi("GET", "/projects", { token: user.token })).status).toBe(200);
  });

  it("checks the CLI token before reading the body", async () => {
    const response = await callApi("POST", "/projects", { body: "{broken" });
    await expectError(response, 401, "unauthorized");
  });
});
