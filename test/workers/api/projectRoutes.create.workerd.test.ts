/**
 * POST /projects: the slug rule (format, reserved names), private, conflicts, the body's size
 * and shape; a refused request writes nothing and no answer carries the worker secret.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { pluginReservedSlugs } from "#src/contracts/pluginRegistry.ts";
import { callApi, countRows, createProject, createUserWithToken, expectError } from "#test/support/workerd/index.ts";
import { jsonOfSize, projectRow, streamOfBytes, streamOfText, userWithProject } from "#test/support/workerd/index.ts";

const KiB = 1024;

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

  it.each<[unknown, string]>([
    ["ab", "too short"],
    ["a", "one character"],
    ["", "empty"],
    ["Ab-c", "uppercase"],
    ["ABC", "all uppercase"],
    ["-abc", "leading hyphen"],
    ["abc-", "trailing hyphen"],
    ["a--b", "double hyphen"],
    ["1abc", "leading digit"],
    ["ab_c", "underscore"],
    ["ab.c", "dot"],
    ["ab c", "space"],
    ["shöp", "non-ASCII"],
    ["a" + "b".repeat(40), "41 characters"],
    [123, "number"],
    [null, "null"],
    [undefined, "missing"],
    [["shop"], "array"],
  ])("rejects slug %j (%s) with 400 and writes nothing", async (slug) => {
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
    ["abc", "3 characters"],
    ["a" + "b".repeat(39), "40 characters"],
    ["a-b-c", "single hyphens"],
    ["a1b2", "digits"],
    ["apis", "reserved word as prefix"],
    ["security-news", "reserved word as prefix"],
    ["my-support", "reserved word as suffix"],
  ])("accepts slug %s (%s)", async (slug) => {
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
