import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { pluginReservedSlugs } from "#src/contracts/pluginRegistry.ts";
import {
  ADMIN_TOKEN,
  apiHarness,
  callApi,
  countRows,
  createProject,
  createUserWithToken,
  expectError,
  jsonOfSize,
  projectRow,
  putCrons,
  streamOfBytes,
  streamOfText,
  userWithProject,
} from "#test/support/workerd/index.ts";
import devApi from "#src/dev/routes/devApiWorker.ts";

const KiB = 1024;

async function cronRows(slug: string): Promise<{ name: string; schedule: string }[]> {
  const { results } = await env.DB.prepare(
    "SELECT project_crons.name AS name, project_crons.schedule AS schedule FROM project_crons JOIN projects ON projects.id = project_crons.project_id WHERE projects.slug = ? ORDER BY name",
  )
    .bind(slug)
    .all<{ name: string; schedule: string }>();
  return results;
}

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

describe("POST /projects", () => {
  it("creates a project (201) without ever returning its worker secret", async () => {
    const user = await createUserWithToken("ada@example.com");
    const response = await callApi("POST", "/projects", { token: user.token, body: { slug: "shop" } });
    expect(response.status).toBe(201);
    const text = await response.text();
    const row = await projectRow("shop");

    expect(row.worker_secret).toMatch(/^[0-9a-f]{64}$/);
    expect(text).not.toContain(row.worker_secret);
    expect(text.toLowerCase()).not.toContain("secret");

    const { project } = JSON.parse(text) as { project: Record<string, unknown> };
    expect(project).toEqual({
      id: row.id,
      slug: "shop",
      scriptName: "proj-shop",
      private: false,
      createdAt: new Date(row.created_at).toISOString(),
      updatedAt: new Date(row.updated_at).toISOString(),
    });
    expect(row.script_name).toBe("proj-shop");
    expect(row.owner_id).toBe(user.id);
    expect(row.private).toBe(0);
  });

  it("generates a distinct secret for every project", async () => {
    const user = await createUserWithToken("ada@example.com");
    const slugs = ["one", "two", "three", "four", "five"];
    for (const slug of slugs) await createProject(user.token, slug);
    const { results } = await env.DB.prepare("SELECT worker_secret FROM projects").all<{ worker_secret: string }>();
    expect(results).toHaveLength(slugs.length);
    for (const r of results) expect(r.worker_secret).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(results.map((r) => r.worker_secret)).size).toBe(slugs.length);
  });

  it.each([
    { body: { slug: "priv", private: true }, expected: { private: true, column: 1 } },
    { body: { slug: "pub", private: false }, expected: { private: false, column: 0 } },
    { body: { slug: "dflt" }, expected: { private: false, column: 0 } },
  ])("stores private=$body.private", async ({ body, expected }) => {
    const user = await createUserWithToken("ada@example.com");
    const response = await callApi("POST", "/projects", { token: user.token, body });
    expect(response.status).toBe(201);
    const { project } = (await response.json()) as { project: { private: boolean } };
    expect(project.private).toBe(expected.private);
    expect((await projectRow(body.slug)).private).toBe(expected.column);
  });

  it.each([
    { who: "the same user", sameUser: true },
    { who: "another user", sameUser: false },
  ])("answers 409 for a slug that exists, even when asked by $who, and keeps the original", async ({ sameUser }) => {
    const first = await userWithProject("ada@example.com", "shop");
    const second = sameUser ? first.user : await createUserWithToken("bob@example.com");
    const response = await callApi("POST", "/projects", { token: second.token, body: { slug: "shop", private: true } });
    const body = await expectError(response, 409, "conflict");
    expect(body.error.message).toContain("shop");
    expect(await countRows("projects")).toBe(1);
    const after = await projectRow("shop");
    expect(after).toEqual(first.row);
  });

  it.each([
    { slug: "ab", why: "too short" },
    { slug: "a", why: "one character" },
    { slug: "", why: "empty" },
    { slug: "Ab-c", why: "uppercase" },
    { slug: "ABC", why: "all uppercase" },
    { slug: "-abc", why: "leading hyphen" },
    { slug: "abc-", why: "trailing hyphen" },
    { slug: "a--b", why: "double hyphen" },
    { slug: "1abc", why: "leading digit" },
    { slug: "ab_c", why: "underscore" },
    { slug: "ab.c", why: "dot" },
    { slug: "ab c", why: "space" },
    { slug: "shöp", why: "non-ASCII" },
    { slug: "a" + "b".repeat(40), why: "41 characters" },
    { slug: 123, why: "number" },
    { slug: null, why: "null" },
    { slug: undefined, why: "missing" },
    { slug: ["shop"], why: "array" },
  ])("rejects slug $slug ($why) with 400 and writes nothing", async ({ slug }) => {
    const user = await createUserWithToken("ada@example.com");
    const response = await callApi("POST", "/projects", { token: user.token, body: { slug } });
    const body = await expectError(response, 400, "invalid_input");
    expect(body.error.message).toMatch(/slug/);
    expect(await countRows("projects")).toBe(0);
  });

  // Issue 11: a slug is `<slug>@<sender domain>` and `<slug>.<domain>`, so role, sign-in and platform names are refused.
  it.each([
    ..."security postmaster abuse noreply no-reply support billing sso auth signin sign-in login logout".split(" "),
    ..."accounts account mail admin administrator www api console platform root".split(" "),
    ..."hostmaster webmaster info internal plugins static".split(" "),
    // Issue 20: RFC 2142's whole list, and the paths the API answers at its root (`/projects`, `/cli`, `/health`).
    ..."mailer-daemon ftp news usenet uucp marketing sales noc cli projects health oauth".split(" "),
    // Every plugin's id (chatserver, workspace, email-send, …) and the names its descriptor reserves.
    ...pluginReservedSlugs(),
  ])("refuses the reserved slug %s with 400 naming the rule and writes nothing", async (slug) => {
    const user = await createUserWithToken("ada@example.com");
    const response = await callApi("POST", "/projects", { token: user.token, body: { slug } });
    const body = await expectError(response, 400, "invalid_input");
    expect(body.error.message).toBe(
      `"${slug}" is reserved (RFC 2142 role names, sign-in and platform names cannot be project slugs).`,
    );
    expect(await countRows("projects")).toBe(0);
  });

  it.each([
    { slug: "abc", why: "3 characters" },
    { slug: "a" + "b".repeat(39), why: "40 characters" },
    { slug: "a-b-c", why: "single hyphens" },
    { slug: "a1b2", why: "digits" },
    { slug: "apis", why: "reserved word as prefix" },
    { slug: "security-news", why: "reserved word as prefix" },
    { slug: "my-support", why: "reserved word as suffix" },
  ])("accepts slug $slug ($why)", async ({ slug }) => {
    const user = await createUserWithToken("ada@example.com");
    const project = await createProject(user.token, slug);
    expect(project.scriptName).toBe(`proj-${slug}`);
  });

  it.each([
    { name: "truncated object", raw: '{"slug":"shop"', code: "malformed_json" },
    { name: "not JSON", raw: "slug=shop", code: "malformed_json" },
    { name: "empty body", raw: "", code: "malformed_json" },
    { name: "trailing garbage", raw: '{"slug":"shop"} x', code: "malformed_json" },
    { name: "JSON array", raw: '[{"slug":"shop"}]', code: "malformed_json" },
    { name: "JSON null", raw: "null", code: "malformed_json" },
    { name: "JSON string", raw: '"shop"', code: "malformed_json" },
    { name: "JSON number", raw: "42", code: "malformed_json" },
  ])("rejects a body that is $name with 400 and writes nothing", async ({ raw, code }) => {
    const user = await createUserWithToken("ada@example.com");
    const response = await callApi("POST", "/projects", {
      token: user.token,
      body: raw,
      headers: { "content-type": "application/json" },
    });
    await expectError(response, 400, code);
    expect(await countRows("projects")).toBe(0);
  });

  it("rejects a body that is not UTF-8 as malformed JSON", async () => {
    const user = await createUserWithToken("ada@example.com");
    const bytes = new Uint8Array([0x7b, 0x22, 0x73, 0x6c, 0x75, 0x67, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]); // {"slug":"\xff\xfe"}
    const response = await callApi("POST", "/projects", { token: user.token, body: bytes });
    await expectError(response, 400, "malformed_json");
    expect(await countRows("projects")).toBe(0);
  });

  it.each([
    { name: "with Content-Length", stream: false },
    { name: "streamed without Content-Length", stream: true },
  ])("rejects a body over 64 KiB ($name) with 413 and writes nothing", async ({ stream }) => {
    const user = await createUserWithToken("ada@example.com");
    const big = jsonOfSize({ slug: "big" }, 64 * KiB + 1);
    const body = stream ? streamOfText(big) : big;
    const headers: Record<string, string> = { "content-type": "application/json" };
    // workerd does not add Content-Length to a Request's headers on its own.
    if (!stream) headers["content-length"] = String(big.length);
    const response = await callApi("POST", "/projects", { token: user.token, body, headers });
    await expectError(response, 413, "payload_too_large");
    expect(await countRows("projects")).toBe(0);
  });

  it("refuses early on a declared Content-Length over 64 KiB, whatever the body", async () => {
    const user = await createUserWithToken("ada@example.com");
    const response = await callApi("POST", "/projects", {
      token: user.token,
      body: JSON.stringify({ slug: "small" }),
      headers: { "content-length": String(64 * KiB + 1) },
    });
    await expectError(response, 413, "payload_too_large");
    expect(await countRows("projects")).toBe(0);
  });

  it("rejects a large stream of junk with 413 before parsing it", async () => {
    const user = await createUserWithToken("ada@example.com");
    const response = await callApi("POST", "/projects", { token: user.token, body: streamOfBytes(1024 * KiB) });
    await expectError(response, 413, "payload_too_large");
  });

  it("accepts a body of exactly 64 KiB", async () => {
    const user = await createUserWithToken("ada@example.com");
    const exact = jsonOfSize({ slug: "exact" }, 64 * KiB);
    expect(new TextEncoder().encode(exact).byteLength).toBe(64 * KiB);
    const response = await callApi("POST", "/projects", { token: user.token, body: exact });
    expect(response.status).toBe(201);
  });

  it.each([{ value: "true" }, { value: 1 }, { value: 0 }, { value: null }, { value: {} }, { value: [] }])(
    "rejects private=$value (not a boolean) with 400 and writes nothing",
    async ({ value }) => {
      const user = await createUserWithToken("ada@example.com");
      const response = await callApi("POST", "/projects", {
        token: user.token,
        body: { slug: "shop", private: value },
      });
      const body = await expectError(response, 400, "invalid_input");
      expect(body.error.message).toMatch(/private/);
      expect(await countRows("projects")).toBe(0);
    },
  );
});

describe("GET /projects", () => {
  it("lists only the caller's own projects, sorted by slug, without secrets", async () => {
    const ada = await createUserWithToken("ada@example.com");
    const bob = await createUserWithToken("bob@example.com");
    const carol = await createUserWithToken("carol@example.com");
    await createProject(ada.token, "zeta");
    await createProject(bob.token, "bobs");
    await createProject(ada.token, "alpha", { private: true });

    const expectations = [
      { user: ada, slugs: ["alpha", "zeta"] },
      { user: bob, slugs: ["bobs"] },
      { user: carol, slugs: [] },
    ];
    for (const { user, slugs } of expectations) {
      const response = await callApi("GET", "/projects", { token: user.token });
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(text.toLowerCase()).not.toContain("secret");
      const { projects } = JSON.parse(text) as { projects: { slug: string; private: boolean }[] };
      expect(projects.map((p) => p.slug)).toEqual(slugs);
    }
    const { results } = await env.DB.prepare("SELECT worker_secret FROM projects").all<{ worker_secret: string }>();
    const listed = await (await callApi("GET", "/projects", { token: ada.token })).text();
    for (const r of results) expect(listed).not.toContain(r.worker_secret);
  });
});

describe("GET /projects/:slug", () => {
  it("returns the caller's project with its crons and no secret", async () => {
    const { user, row } = await userWithProject("ada@example.com", "shop", { private: true });
    await putCrons(user.token, "shop", [{ name: "hourly", schedule: "0 * * * *" }]);
    const response = await callApi("GET", "/projects/shop", { token: user.token });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).not.toContain(row.worker_secret);
    const { project } = JSON.parse(text) as { project: Record<string, unknown> };
    expect(project).toMatchObject({ id: row.id, slug: "shop", scriptName: "proj-shop", private: true });
    expect(project.crons).toEqual([{ name: "hourly", schedule: "0 * * * *" }]);
  });

  it("answers another user's project exactly like a missing one (404)", async () => {
    await userWithProject("ada@example.com", "shop");
    const bob = await createUserWithToken("bob@example.com");

    const foreign = await callApi("GET", "/projects/shop", { token: bob.token });
    const foreignBody = await expectError(foreign, 404, "not_found");
    const missing = await callApi("GET", "/projects/nope", { token: bob.token });
    const missingBody = await expectError(missing, 404, "not_found");

    expect(foreignBody.error.message.replace("shop", "<slug>")).toBe(
      missingBody.error.message.replace("nope", "<slug>"),
    );
    expect(foreignBody.error.message).not.toMatch(/ada|owner|another|forbidden/i);
  });
});

describe("PUT /projects/:slug/metadata", () => {
  it("records crons and replaces the previous set on the next push", async () => {
    const { user, row } = await userWithProject("ada@example.com", "shop");
    const first = await callApi("PUT", "/projects/shop/metadata", {
      token: user.token,
      body: {
        crons: [
          { name: "__workflow-recovery", schedule: "* * * * *" },
          { name: "hourly", schedule: "0 * * * *" },
        ],
      },
    });
    expect(first.status).toBe(200);
    const firstBody = (await first.json()) as { project: { slug: string }; crons: unknown };
    expect(firstBody.project.slug).toBe("shop");
    expect(JSON.stringify(firstBody)).not.toContain(row.worker_secret);
    expect(await cronRows("shop")).toEqual([
      { name: "__workflow-recovery", schedule: "* * * * *" },
      { name: "hourly", schedule: "0 * * * *" },
    ]);

    await putCrons(user.token, "shop", [{ name: "nightly", schedule: "30 3 * * 1-5" }]);
    expect(await cronRows("shop")).toEqual([{ name: "nightly", schedule: "30 3 * * 1-5" }]);

    const after = await projectRow("shop");
    expect(after.updated_at).toBeGreaterThanOrEqual(row.updated_at);
  });

  it.each([
    { name: "an empty list", body: { crons: [] } },
    { name: "no crons field", body: {} },
  ])("clears the crons on $name", async ({ body }) => {
    const { user } = await userWithProject("ada@example.com", "shop");
    await putCrons(user.token, "shop", [{ name: "hourly", schedule: "0 * * * *" }]);
    const response = await callApi("PUT", "/projects/shop/metadata", { token: user.token, body });
    expect(response.status).toBe(200);
    expect(await cronRows("shop")).toEqual([]);
  });

  it("only touches the named project's crons", async () => {
    const { user } = await userWithProject("ada@example.com", "shop");
    await createProject(user.token, "blog");
    await putCrons(user.token, "blog", [{ name: "daily", schedule: "0 0 * * *" }]);
    await putCrons(user.token, "shop", [{ name: "hourly", schedule: "0 * * * *" }]);
    await putCrons(user.token, "shop", []);
    expect(await cronRows("blog")).toEqual([{ name: "daily", schedule: "0 0 * * *" }]);
  });

  const valid = { name: "ok", schedule: "* * * * *" };
  it.each([
    { name: "crons is an object", crons: { hourly: "0 * * * *" } },
    { name: "crons is a string", crons: "* * * * *" },
    { name: "crons is null", crons: null },
    {
      name: "more than 50 crons",
      crons: Array.from({ length: 51 }, (_, i) => ({ name: `c${i}`, schedule: "* * * * *" })),
    },
    { name: "entry is null", crons: [valid, null] },
    { name: "entry is a string", crons: ["* * * * *"] },
    { name: "name missing", crons: [{ schedule: "* * * * *" }] },
    { name: "name empty", crons: [{ name: "", schedule: "* * * * *" }] },
    { name: "name with a space", crons: [{ name: "my cron", schedule: "* * * * *" }] },
    { name: "name with a slash", crons: [{ name: "a/b", schedule: "* * * * *" }] },
    { name: "name with a dot", crons: [{ name: "a.b", schedule: "* * * * *" }] },
    { name: "name of 65 chars", crons: [{ name: "a".repeat(65), schedule: "* * * * *" }] },
    { name: "name is a number", crons: [{ name: 5, schedule: "* * * * *" }] },
    { name: "schedule missing", crons: [{ name: "x" }] },
    { name: "schedule empty", crons: [{ name: "x", schedule: "" }] },
    { name: "schedule with 4 fields", crons: [{ name: "x", schedule: "* * * *" }] },
    { name: "schedule with 6 fields", crons: [{ name: "x", schedule: "0 * * * * *" }] },
    { name: "schedule minute 60", crons: [{ name: "x", schedule: "60 * * * *" }] },
    { name: "schedule hour 24", crons: [{ name: "x", schedule: "0 24 * * *" }] },
    { name: "schedule month 13", crons: [{ name: "x", schedule: "0 0 1 13 *" }] },
    { name: "schedule of words", crons: [{ name: "x", schedule: "every five minutes" }] },
    { name: "schedule nickname", crons: [{ name: "x", schedule: "@hourly" }] },
    { name: "schedule is a number", crons: [{ name: "x", schedule: 5 }] },
    { name: "one bad among good ones", crons: [valid, { name: "bad", schedule: "nope * * * *" }] },
  ])("rejects $name with 400 and keeps the previous crons", async ({ crons }) => {
    const { user } = await userWithProject("ada@example.com", "shop");
    await putCrons(user.token, "shop", [{ name: "hourly", schedule: "0 * * * *" }]);
    const before = await projectRow("shop");
    const response = await callApi("PUT", "/projects/shop/metadata", { token: user.token, body: { crons } });
    await expectError(response, 400, "invalid_input");
    expect(await cronRows("shop")).toEqual([{ name: "hourly", schedule: "0 * * * *" }]);
    expect((await projectRow("shop")).updated_at).toBe(before.updated_at);
  });

  it("rejects two crons with the same name with 400 and keeps the previous crons", async () => {
    const { user } = await userWithProject("ada@example.com", "shop");
    await putCrons(user.token, "shop", [{ name: "hourly", schedule: "0 * * * *" }]);
    const response = await callApi("PUT", "/projects/shop/metadata", {
      token: user.token,
      body: {
        crons: [
          { name: "dup", schedule: "* * * * *" },
          { name: "dup", schedule: "0 * * * *" },
        ],
      },
    });
    await expectError(response, 400, "invalid_input");
    expect(await cronRows("shop")).toEqual([{ name: "hourly", schedule: "0 * * * *" }]);
  });

  it("leaves the previous crons intact when duplicate cron names make the write fail", async () => {
    const { user } = await userWithProject("ada@example.com", "shop");
    await putCrons(user.token, "shop", [{ name: "hourly", schedule: "0 * * * *" }]);
    const before = await projectRow("shop");
    const response = await callApi("PUT", "/projects/shop/metadata", {
      token: user.token,
      body: {
        crons: [
          { name: "dup", schedule: "* * * * *" },
          { name: "dup", schedule: "0 * * * *" },
        ],
      },
    });
    expect(response.ok).toBe(false);
    // The batch is one transaction: the DELETE of the old crons is rolled back too.
    expect(await cronRows("shop")).toEqual([{ name: "hourly", schedule: "0 * * * *" }]);
    expect((await projectRow("shop")).updated_at).toBe(before.updated_at);
  });

  it("allows metadata bodies above the default 64 KiB limit (up to 256 KiB)", async () => {
    const { user } = await userWithProject("ada@example.com", "shop");
    const body = jsonOfSize({ crons: [{ name: "hourly", schedule: "0 * * * *" }] }, 200 * KiB);
    const response = await callApi("PUT", "/projects/shop/metadata", { token: user.token, body });
    expect(response.status).toBe(200);
    expect(await cronRows("shop")).toEqual([{ name: "hourly", schedule: "0 * * * *" }]);
  });

  it("accepts exactly 50 crons and common schedule syntax", async () => {
    const { user } = await userWithProject("ada@example.com", "shop");
    const schedules = [
      "*/5 * * * *",
      "0 9-17 * * 1-5",
      "15,45 * * * *",
      "0 0 1 * *",
      "0 12 * JAN,JUL *",
      "0 0 * * SUN",
    ];
    const crons = Array.from({ length: 50 }, (_, i) => ({
      name: `c-${i}_x`,
      schedule: schedules[i % schedules.length]!,
    }));
    const response = await callApi("PUT", "/projects/shop/metadata", { token: user.token, body: { crons } });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(await countRows("project_crons")).toBe(50);
  });

  it("answers another user's project with 404 and writes nothing", async () => {
    const { user: ada } = await userWithProject("ada@example.com", "shop");
    await putCrons(ada.token, "shop", [{ name: "hourly", schedule: "0 * * * *" }]);
    const bob = await createUserWithToken("bob@example.com");
    const response = await callApi("PUT", "/projects/shop/metadata", {
      token: bob.token,
      body: { crons: [{ name: "evil", schedule: "* * * * *" }] },
    });
    await expectError(response, 404, "not_found");
    expect(await cronRows("shop")).toEqual([{ name: "hourly", schedule: "0 * * * *" }]);
  });

  it.each([
    { name: "malformed JSON", body: "{crons:", status: 400, code: "malformed_json" },
    { name: "a JSON array", body: "[]", status: 400, code: "malformed_json" },
    {
      name: "over 256 KiB with Content-Length",
      body: jsonOfSize({ crons: [] }, 256 * KiB + 1),
      headers: { "content-length": String(256 * KiB + 1) },
      status: 413,
      code: "payload_too_large",
    },
    {
      name: "over 256 KiB, streamed",
      body: streamOfText(jsonOfSize({ crons: [] }, 256 * KiB + 1)),
      status: 413,
      code: "payload_too_large",
    },
  ])("rejects $name and keeps the previous crons", async ({ body, headers, status, code }) => {
    const { user } = await userWithProject("ada@example.com", "shop");
    await putCrons(user.token, "shop", [{ name: "hourly", schedule: "0 * * * *" }]);
    const response = await callApi("PUT", "/projects/shop/metadata", { token: user.token, body, headers });
    await expectError(response, status, code);
    expect(await cronRows("shop")).toEqual([{ name: "hourly", schedule: "0 * * * *" }]);
  });
});

describe("routing", () => {
  it.each([
    { method: "GET", path: "/nope" },
    { method: "DELETE", path: "/projects/shop" },
    { method: "GET", path: "/internal/workflow/execute" },
    { method: "GET", path: "/admin/users" },
  ])("answers $method $path with a JSON 404", async ({ method, path }) => {
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
