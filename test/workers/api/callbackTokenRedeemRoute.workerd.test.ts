import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { IDENTITY_HEADER, signRequestToken } from "#src/core/requestToken.ts";
import type { ProjectRow } from "#src/workers/db/projectsTable.ts";
import { callApi, expectError, userWithProject } from "#test/support/workerd/index.ts";

// POST /internal/auth/redeem { jti, exp }: a project records a callback token it is about to redeem.
// 200 the first time, 409 after: a replayed callback signs nobody in.

const PATH = "/internal/auth/redeem";
const JTI = "A".repeat(22);

function now(): number {
  return Math.floor(Date.now() / 1000);
}

async function redeem(
  row: Pick<ProjectRow, "id" | "worker_secret">,
  body: unknown,
  options: { secret?: string; token?: string | null; nowMS?: number } = {},
): Promise<Response> {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  const token =
    options.token !== undefined
      ? options.token
      : await signRequestToken(
          "identity",
          { method: "POST", pathAndQuery: PATH, body: text },
          { projectId: row.id, secret: options.secret ?? row.worker_secret, nowMS: options.nowMS },
        );
  return callApi("POST", PATH, {
    body: text,
    headers: { "content-type": "application/json", ...(token === null ? {} : { [IDENTITY_HEADER]: token }) },
  });
}

async function rows(): Promise<{ project_id: number; jti: string; expires_at: number }[]> {
  return (await env.DB.prepare("SELECT * FROM redeemed_callback_tokens ORDER BY jti").all()).results as never;
}

describe("POST /internal/auth/redeem", () => {
  it("records a jti once: 200, then 409 for the same request replayed, while another project's same jti is its own", async () => {
    const { row: shop } = await userWithProject("a@example.net", "shop");
    const { row: blog } = await userWithProject("b@example.net", "blog");
    const exp = now() + 120;
    const first = await redeem(shop, { jti: JTI, exp });
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ redeemed: true });
    await expectError(await redeem(shop, { jti: JTI, exp }), 409, "conflict");
    expect((await redeem(blog, { jti: JTI, exp })).status).toBe(200);
    expect(await rows()).toEqual([
      { project_id: shop.id, jti: JTI, expires_at: exp },
      { project_id: blog.id, jti: JTI, expires_at: exp },
    ]);
  });

  it("purges expired rows on insert", async () => {
    const { row } = await userWithProject("a@example.net", "shop");
    await env.DB.prepare("INSERT INTO redeemed_callback_tokens (project_id, jti, expires_at) VALUES (?, ?, ?)")
      .bind(row.id, "B".repeat(22), now() - 3600)
      .run();
    expect((await redeem(row, { jti: JTI, exp: now() + 120 })).status).toBe(200);
    expect((await rows()).map((r) => r.jti)).toEqual([JTI]);
  });

  const refusals: [string, unknown, number, string][] = [
    ["a jti of the wrong length", { jti: "A".repeat(21), exp: 0 }, 400, "invalid_input"],
    ["a jti with other characters", { jti: `${"A".repeat(21)}=`, exp: 0 }, 400, "invalid_input"],
    ["no jti", { exp: 0 }, 400, "invalid_input"],
    ["an exp in the far future (rows kept forever)", { jti: JTI, exp: 9_999_999_999 }, 400, "invalid_input"],
    ["an exp long past (an expired token)", { jti: JTI, exp: 1 }, 400, "invalid_input"],
    ["an exp that is not a number", { jti: JTI, exp: "soon" }, 400, "invalid_input"],
    ["malformed JSON", "{", 400, "malformed_json"],
    ["an oversized body", JSON.stringify({ jti: JTI, exp: 0, pad: "x".repeat(2000) }), 413, "payload_too_large"],
  ];
  it.each(refusals)("refuses %s with %i %s and records nothing", async (_name, body, status, code) => {
    const { row } = await userWithProject("a@example.net", "shop");
    const fixed =
      typeof body === "object" && body !== null && (body as { exp?: unknown }).exp === 0
        ? { ...(body as object), exp: now() + 120 }
        : body;
    await expectError(await redeem(row, fixed), status, code);
    expect(await rows()).toEqual([]);
  });

  it.each<[string, (row: ProjectRow) => { secret?: string; token?: string | null; nowMS?: number }]>([
    ["no identity token", () => ({ token: null })],
    ["a forged identity token (another secret)", () => ({ secret: "cd".repeat(32) })],
    ["an expired identity token", () => ({ nowMS: Date.now() - 3_600_000 })],
    ["a malformed identity token", () => ({ token: "x.y.z" })],
  ])("refuses %s with 401 and records nothing", async (_name, options) => {
    const { row } = await userWithProject("a@example.net", "shop");
    await expectError(await redeem(row, { jti: JTI, exp: now() + 120 }, options(row)), 401, "unauthorized");
    expect(await rows()).toEqual([]);
  });
});
