/**
 * The API worker's own routes outside a project: creating users (POST /admin/users), the root,
 * health and the 404 of anything else. The project routes are in projectRoutes.<aspect>.workerd.test.ts.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, apiHarness, callApi, countRows, createUserWithToken } from "#test/support/workerd/index.ts";
import { expectError } from "#test/support/workerd/index.ts";

describe("POST /admin/users", () => {
  it("creates a user and a CLI token that is shown once and stored only as a hash", async () => {
    const response = await callApi("POST", "/admin/users", {
      token: ADMIN_TOKEN,
      body: { email: "Ada@Example.COM", label: "laptop" },
    });
    expect(response.status).toBe(201);
    const body = (await response.json()) as { user: { id: number; email: string }; token: string };
    expect(body.user.email).toBe("ada@example.com");
    expect(body.token).toMatch(/^plt_[A-Za-z0-9_-]{43}$/);

    const row = await env.DB.prepare("SELECT token_hash, label, expires_at FROM cli_tokens").first<{
      token_hash: string;
      label: string;
      expires_at: number | null;
    }>();
    expect(row!.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row!.token_hash).not.toContain(body.token);
    expect(row!.label).toBe("laptop");

    // The token works for the CLI routes.
    const list = await callApi("GET", "/projects", { token: body.token });
    expect(list.status).toBe(200);
  });

  it("reuses the user for the same email and issues an additional, independent token", async () => {
    const first = await createUserWithToken("bob@example.com");
    const second = await createUserWithToken("BOB@example.com");
    expect(second.id).toBe(first.id);
    expect(second.token).not.toBe(first.token);
    expect(await countRows("users")).toBe(1);
    expect(await countRows("cli_tokens")).toBe(2);
    for (const token of [first.token, second.token]) {
      expect((await callApi("GET", "/projects", { token })).status).toBe(200);
    }
  });

  it.each<{ name: string; headers: Record<string, string> }>([
    { name: "no Authorization header", headers: {} },
    { name: "wrong admin token", headers: { authorization: "Bearer not-the-admin-token" } },
    { name: "admin token with a suffix", headers: { authorization: `Bearer ${ADMIN_TOKEN}x` } },
    { name: "admin token prefix only", headers: { authorization: `Bearer ${ADMIN_TOKEN.slice(0, -1)}` } },
    { name: "Basic scheme", headers: { authorization: `Basic ${ADMIN_TOKEN}` } },
    { name: "Bearer without a token", headers: { authorization: "Bearer " } },
    { name: "a CLI-looking token", headers: { authorization: `Bearer plt_${"a".repeat(43)}` } },
  ])("rejects $name with 401 and writes nothing", async ({ headers }) => {
    const response = await callApi("POST", "/admin/users", { headers, body: { email: "eve@example.com" } });
    await expectError(response, 401, "unauthorized");
    expect(await countRows("users")).toBe(0);
    expect(await countRows("cli_tokens")).toBe(0);
  });

  it("rejects every caller when ADMIN_TOKEN is not configured", async () => {
    const { env: noAdmin } = apiHarness({ env: { ADMIN_TOKEN: undefined } });
    for (const token of [ADMIN_TOKEN, "undefined", ""]) {
      const response = await callApi("POST", "/admin/users", {
        token,
        body: { email: "eve@example.com" },
        env: noAdmin,
      });
      await expectError(response, 401, "unauthorized");
    }
    expect(await countRows("users")).toBe(0);
  });

  it("checks the admin token before reading the body", async () => {
    const response = await callApi("POST", "/admin/users", { body: "{not json" });
    await expectError(response, 401, "unauthorized");
  });

  it.each([
    { name: "missing email", body: {} },
    { name: "empty email", body: { email: "" } },
    { name: "no @", body: { email: "ada.example.com" } },
    { name: "no domain dot", body: { email: "ada@example" } },
    { name: "space inside", body: { email: "a da@example.com" } },
    { name: "two @", body: { email: "a@b@example.com" } },
    { name: "quote", body: { email: '"a"@example.com' } },
    { name: "number", body: { email: 42 } },
    { name: "array", body: { email: ["a@example.com"] } },
    { name: "longer than 254", body: { email: `${"a".repeat(250)}@example.com` } },
  ])("rejects a bad email ($name) with 400 and writes nothing", async ({ body }) => {
    const response = await callApi("POST", "/admin/users", { token: ADMIN_TOKEN, body });
    await expectError(response, 400, "invalid_input");
    expect(await countRows("users")).toBe(0);
    expect(await countRows("cli_tokens")).toBe(0);
  });

  it("rejects malformed JSON with 400 malformed_json", async () => {
    const response = await callApi("POST", "/admin/users", { token: ADMIN_TOKEN, body: '{"email":' });
    await expectError(response, 400, "malformed_json");
    expect(await countRows("users")).toBe(0);
  });
});

describe("GET /", () => {
  it("sends a browser to the console", async () => {
    const response = await callApi("GET", "/");
    expect(response.status).toBe(302);
    expect(new URL(response.headers.get("location")!).pathname).toBe("/console/");
  });
});

describe("routing", () => {
  it.each([
    ["GET", "/nope"],
    ["DELETE", "/projects/shop"],
    ["GET", "/internal/workflow/execute"],
    ["GET", "/admin/users"],
  ])("answers %s %s with a JSON 404", async (method, path) => {
    const response = await callApi(method, path);
    const body = await expectError(response, 404, "not_found");
    expect(body.error.message).toContain(path);
  });

  it("answers GET /health", async () => {
    const response = await callApi("GET", "/health");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
  });
});
