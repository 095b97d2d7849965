import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AcceptedScript } from "#src/dev/cloudflare/scriptUploadStandIn.ts";
import { callJson, deployTarget } from "#test/support/workerd/index.ts";

const KEY = "11".repeat(32);
const secretsEnv = { ...env, SECRETS_ENCRYPTION_KEY: KEY };

const cloudflareStandIn = () => deployTarget({}, secretsEnv);

const call = (method: string, path: string, body: unknown, token: string | null, e: object = secretsEnv) =>
  callJson(method, path, body, token, e);

async function userWithProject(email: string, slug: string) {
  const user = await call("POST", "/admin/users", { email }, "test-admin-token");
  const project = await call("POST", "/projects", { slug }, user.json.token);
  return { token: user.json.token as string, id: project.json.project.id as number };
}

const VALUE = "sk_live_do-not-print-me";

describe("project secrets: put, list, delete", () => {
  it("stores a value sealed, lists names only, and answers no value anywhere", async () => {
    const { token, id } = await userWithProject("ada@example.com", "vault");
    const put = await call("PUT", "/projects/vault/secrets/API_KEY", { value: VALUE }, token);
    expect(put.status).toBe(201);
    expect(put.json).toEqual({ secret: { name: "API_KEY" }, created: true, applies: "next_push" });
    expect(put.headers.get("cache-control")).toBe("no-store");
    const again = await call("PUT", "/projects/vault/secrets/API_KEY", { value: `${VALUE}-2` }, token);
    expect(again.status).toBe(200);
    expect(again.json.created).toBe(false);

    const list = await call("GET", "/projects/vault/secrets", undefined, token);
    expect(list.status).toBe(200);
    expect(list.json.secrets).toEqual([{ name: "API_KEY", updatedAt: expect.any(Number) }]);
    for (const answer of [put, again, list]) expect(answer.text).not.toContain(VALUE);
    // Neither the project's view nor its list carries a secret.
    expect((await call("GET", "/projects/vault", undefined, token)).text).not.toContain(VALUE);

    // At rest: sealed, bound to the project and the name.
    const row = await env.DB.prepare(
      "SELECT sealed_value FROM project_secrets WHERE project_id = ? AND name = 'API_KEY'",
    )
      .bind(id)
      .first<string>("sealed_value");
    expect(row).toMatch(/^v1\./);
    expect(row).not.toContain(VALUE);

    const deleted = await call("DELETE", "/projects/vault/secrets/API_KEY", undefined, token);
    expect(deleted.json).toEqual({ deleted: "API_KEY", applies: "next_push" });
    expect((await call("GET", "/projects/vault/secrets", undefined, token)).json.secrets).toEqual([]);
    const missing = await call("DELETE", "/projects/vault/secrets/API_KEY", undefined, token);
    expect(missing.status).toBe(404);
    expect(missing.json.error.message).toBe('Project "vault" has no secret named "API_KEY".');
  });

  it.each([
    ["PLATFORM_X", { value: "v" }, 400, "PLATFORM_X: names starting with PLATFORM_ are the platform's own"],
    ["platform_worker_secret", { value: "v" }, 400, "names starting with PLATFORM_ are the platform's own"],
    ["EMAIL_PLUGIN", { value: "v" }, 400, "EMAIL_PLUGIN is a binding the platform gives every project"],
    ["WORKFLOW_RUNS", { value: "v" }, 400, "WORKFLOW_RUNS is a binding the platform gives every project"],
    ["1KEY", { value: "v" }, 400, "is not a secret name"],
    ["API-KEY", { value: "v" }, 400, "is not a secret name"],
    ["API_KEY", { value: "" }, 400, "The value of API_KEY is empty"],
    ["API_KEY", { value: 42 }, 400, "The value of API_KEY must be a string"],
    ["API_KEY", {}, 400, "The value of API_KEY must be a string"],
    ["API_KEY", { value: "x".repeat(5 * 1024 + 1) }, 413, "over 5 KiB"],
  ])("%s with %j is refused (%d)", async (name, body, status, message) => {
    const { token } = await userWithProject("refused@example.com", "refused");
    const answer = await call("PUT", `/projects/refused/secrets/${name}`, body, token);
    expect(answer.status).toBe(status);
    expect(answer.json.error.message).toContain(message);
    expect((await call("GET", "/projects/refused/secrets", undefined, token)).json.secrets).toEqual([]);
  });

  it("another account's project, and no token, answer as for a missing project", async () => {
    const owner = await userWithProject("owner@example.com", "theirs");
    await call("PUT", "/projects/theirs/secrets/API_KEY", { value: VALUE }, owner.token);
    const other = await call("POST", "/admin/users", { email: "mallory@example.com" }, "test-admin-token");
    for (const [method, body] of [
      ["GET", undefined],
      ["PUT", { value: "overwritten" }],
      ["DELETE", undefined],
    ] as const) {
      const path = method === "GET" ? "/projects/theirs/secrets" : "/projects/theirs/secrets/API_KEY";
      const answer = await call(method, path, body, other.json.token);
      expect(answer.status).toBe(404);
      expect(answer.text).not.toContain(VALUE);
      expect((await call(method, path, body, null)).status).toBe(401);
    }
    expect((await call("GET", "/projects/theirs/secrets", undefined, owner.token)).json.secrets).toHaveLength(1);
  });

  it("a project has at most 64 secrets; replacing one is always allowed", async () => {
    const { token } = await userWithProject("many@example.com", "many");
    for (let i = 0; i < 64; i++)
      expect((await call("PUT", `/projects/many/secrets/S${i}`, { value: "v" }, token)).status).toBe(201);
    const over = await call("PUT", "/projects/many/secrets/S64", { value: "v" }, token);
    expect(over.status).toBe(409);
    expect(over.json.error.message).toBe('Project "many" has 64 secrets, the most it may have: delete one first.');
    expect((await call("PUT", "/projects/many/secrets/S0", { value: "w" }, token)).status).toBe(200);
  });
});

describe("secrets in uploads", () => {
  const BUNDLE = "export default { fetch() { return new Response('hi') } }";

  it("binds every secret as secret_text on each push, so they survive later pushes, and drops a deleted one", async () => {
    const cloudflare = cloudflareStandIn();
    const { token } = await userWithProject("pusher@example.com", "pushed");
    await call("PUT", "/projects/pushed/secrets/API_KEY", { value: VALUE }, token);
    await call("PUT", "/projects/pushed/secrets/REGION", { value: "eu" }, token);
    const secretsOf = (upload: AcceptedScript) =>
      Object.fromEntries(
        upload.metadata
          .bindings!.filter((b) => b.type === "secret_text" && !b.name.startsWith("PLATFORM_"))
          .map((b) => [b.name, (b as { text: string }).text]),
      );
    const push = () =>
      call("PUT", "/projects/pushed/deployment", { bundle: BUNDLE, metadata: {} }, token, cloudflare.env);

    const first = await push();
    expect(first.status).toBe(200);
    expect(first.text).not.toContain(VALUE);
    expect(secretsOf(cloudflare.uploads[0]!)).toEqual({ API_KEY: VALUE, REGION: "eu" });
    // No keep_bindings: each upload states the whole set itself.
    expect(cloudflare.uploads[0]!.metadata).not.toHaveProperty("keep_bindings");

    await push();
    expect(secretsOf(cloudflare.uploads[1]!)).toEqual({ API_KEY: VALUE, REGION: "eu" });

    await call("DELETE", "/projects/pushed/secrets/REGION", undefined, token);
    await push();
    expect(secretsOf(cloudflare.uploads[2]!)).toEqual({ API_KEY: VALUE });
  });

  it("a sealed value copied into another project's row does not open: that project's push fails, leaking nothing", async () => {
    const cloudflare = cloudflareStandIn();
    const victim = await userWithProject("victim@example.com", "victim");
    const thief = await userWithProject("thief@example.com", "thief");
    await call("PUT", "/projects/victim/secrets/API_KEY", { value: VALUE }, victim.token);
    const sealed = await env.DB.prepare("SELECT sealed_value FROM project_secrets WHERE project_id = ?")
      .bind(victim.id)
      .first<string>("sealed_value");
    await env.DB.prepare(
      "INSERT INTO project_secrets (project_id, name, sealed_value, updated_at) VALUES (?, 'API_KEY', ?, 0)",
    )
      .bind(thief.id, sealed)
      .run();
    const push = await call(
      "PUT",
      "/projects/thief/deployment",
      { bundle: BUNDLE, metadata: {} },
      thief.token,
      cloudflare.env,
    );
    expect(push.status).toBe(500);
    expect(push.json.error.message).toContain("The secret API_KEY could not be opened");
    expect(push.text).not.toContain(VALUE);
    expect(cloudflare.uploads).toEqual([]);
  });
});
