import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SESSION_ROUTES } from "#src/contracts/signInSessions.ts";
import { IDENTITY_HEADER, signRequestToken } from "#src/core/requestToken.ts";
import { MAX_LIVE_SESSIONS_PER_PROJECT } from "#src/workers/db/projectSessionsTable.ts";
import type { ProjectRow } from "#src/workers/db/projectsTable.ts";
import { callApi, expectError, userWithProject } from "#test/support/workerd/index.ts";

// The platform's record of a project's sign-in sessions (src/contracts/signInSessions.ts).

const now = () => Math.floor(Date.now() / 1000);
const sid = (c: string) => c.repeat(22);
const ADA = "a".repeat(64);
const BOB = "b".repeat(64);

async function call(
  row: Pick<ProjectRow, "id" | "worker_secret">,
  path: string,
  body: unknown,
  options: { secret?: string; token?: string | null } = {},
): Promise<Response> {
  const text = JSON.stringify(body);
  const token =
    options.token !== undefined
      ? options.token
      : await signRequestToken(
          "identity",
          { method: "POST", pathAndQuery: path, body: text },
          { projectId: row.id, secret: options.secret ?? row.worker_secret },
        );
  return callApi("POST", path, {
    body: text,
    headers: { "content-type": "application/json", ...(token === null ? {} : { [IDENTITY_HEADER]: token }) },
  });
}

const start = (row: ProjectRow, s: string, user = ADA, exp = now() + 3600) =>
  call(row, SESSION_ROUTES.start, { session: { sid: s, user, exp } });
const active = async (row: ProjectRow, s: string) =>
  ((await (await call(row, SESSION_ROUTES.check, { sid: s })).json()) as { active: boolean }).active;
const ended = async (response: Response) => {
  expect(response.status).toBe(200);
  return ((await response.json()) as { ended: number }).ended;
};

async function sessionRows(): Promise<{ project_id: number; sid: string; user_key: string; expires_at: number }[]> {
  return (await env.DB.prepare("SELECT * FROM project_sessions ORDER BY project_id, sid").all()).results as never;
}

describe("the session routes", () => {
  it("start → check active → end → check not active; ending again ends nothing", async () => {
    const { row } = await userWithProject("owner@example.net", "shop");
    const exp = now() + 3600;
    const started = await start(row, sid("A"), ADA, exp);
    expect(started.status).toBe(200);
    expect(await started.json()).toEqual({ started: true });
    expect(started.headers.get("cache-control")).toBe("no-store");
    expect(await sessionRows()).toEqual([{ project_id: row.id, sid: sid("A"), user_key: ADA, expires_at: exp }]);
    expect(await active(row, sid("A"))).toBe(true);
    expect(await active(row, sid("B"))).toBe(false);

    expect(await ended(await call(row, SESSION_ROUTES.end, { sids: [sid("A"), sid("B")] }))).toBe(1);
    expect(await active(row, sid("A"))).toBe(false);
    expect(await ended(await call(row, SESSION_ROUTES.end, { sids: [sid("A")] }))).toBe(0);
  });

  it("end-user ends every session of that user in the project, and nobody else's", async () => {
    const { row } = await userWithProject("owner@example.net", "shop");
    for (const [s, user] of [
      ["A", ADA],
      ["B", ADA],
      ["C", BOB],
    ] as const)
      await start(row, sid(s), user);
    expect(await ended(await call(row, SESSION_ROUTES.endUser, { user: ADA }))).toBe(2);
    expect([await active(row, sid("A")), await active(row, sid("B")), await active(row, sid("C"))]).toEqual([
      false,
      false,
      true,
    ]);
  });

  it("a project can neither see nor end another project's sessions (the project is the token's, never the body's)", async () => {
    const { row: shop } = await userWithProject("a@example.net", "shop");
    const { row: blog } = await userWithProject("b@example.net", "blog");
    await start(shop, sid("A"), ADA);
    expect(await active(blog, sid("A"))).toBe(false);
    expect(await ended(await call(blog, SESSION_ROUTES.end, { sids: [sid("A")] }))).toBe(0);
    expect(await ended(await call(blog, SESSION_ROUTES.endUser, { user: ADA }))).toBe(0);
    expect(await active(shop, sid("A"))).toBe(true);
  });

  it("an expired session is not active, and expired rows are purged when a session starts", async () => {
    const { row } = await userWithProject("owner@example.net", "shop");
    await env.DB.prepare("INSERT INTO project_sessions (project_id, sid, user_key, expires_at) VALUES (?, ?, ?, ?)")
      .bind(row.id, sid("X"), ADA, now() - 1)
      .run();
    expect(await active(row, sid("X"))).toBe(false);
    await start(row, sid("A"));
    expect((await sessionRows()).map((r) => r.sid)).toEqual([sid("A")]);
  });

  it("starting the same session twice is one session", async () => {
    const { row } = await userWithProject("owner@example.net", "shop");
    expect((await start(row, sid("A"))).status).toBe(200);
    expect((await start(row, sid("A"))).status).toBe(200);
    expect(await sessionRows()).toHaveLength(1);
  });

  it(`a project at ${MAX_LIVE_SESSIONS_PER_PROJECT} live sessions gets 403 quota_exceeded, and one more after a sign-out`, async () => {
    const { row } = await userWithProject("owner@example.net", "shop");
    await env.DB.prepare(
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) INSERT INTO project_sessions (project_id, sid, user_key, expires_at) SELECT ?, printf('%022d', i), ?, ? FROM n",
    )
      .bind(MAX_LIVE_SESSIONS_PER_PROJECT, row.id, ADA, now() + 3600)
      .run();
    const refused = await expectError(await start(row, sid("A")), 403, "quota_exceeded");
    expect(refused.error.message).toBe(
      `This project already has ${MAX_LIVE_SESSIONS_PER_PROJECT} live sign-in sessions, the most the platform keeps for one project; nobody else can sign in until some sign out or expire.`,
    );
    expect(await active(row, sid("A"))).toBe(false);
    await call(row, SESSION_ROUTES.end, { sids: ["0".repeat(21) + "1"] });
    expect((await start(row, sid("A"))).status).toBe(200);
  });

  const refusals: [string, string, unknown][] = [
    ["start: a sid that is not one", SESSION_ROUTES.start, { session: { sid: "short", user: ADA, exp: now() + 60 } }],
    [
      "start: a user that is not a key",
      SESSION_ROUTES.start,
      { session: { sid: sid("A"), user: "ada@x.com", exp: now() + 60 } },
    ],
    ["start: an exp in the past", SESSION_ROUTES.start, { session: { sid: sid("A"), user: ADA, exp: now() - 1 } }],
    [
      "start: an exp beyond 400 days",
      SESSION_ROUTES.start,
      { session: { sid: sid("A"), user: ADA, exp: now() + 401 * 86_400 } },
    ],
    ["start: no session", SESSION_ROUTES.start, {}],
    ["check: no sid", SESSION_ROUTES.check, {}],
    ["end: no sids", SESSION_ROUTES.end, { sids: [] }],
    ["end: more than 4 sids", SESSION_ROUTES.end, { sids: ["A", "B", "C", "D", "E"].map(sid) }],
    ["end-user: an address instead of a key", SESSION_ROUTES.endUser, { user: "ada@example.com" }],
  ];
  it.each(refusals)("%s → 400 invalid_input, nothing recorded", async (_name, path, body) => {
    const { row } = await userWithProject("owner@example.net", "shop");
    await expectError(await call(row, path, body), 400, "invalid_input");
    expect(await sessionRows()).toEqual([]);
  });

  it.each(Object.values(SESSION_ROUTES))("%s refuses a missing or forged identity with 401", async (path) => {
    const { row } = await userWithProject("owner@example.net", "shop");
    await start(row, sid("A"));
    const body = path === SESSION_ROUTES.start ? { session: { sid: sid("B"), user: ADA, exp: now() + 60 } } : {};
    await expectError(
      await call(row, path, { ...body, sid: sid("A"), sids: [sid("A")], user: ADA }, { token: null }),
      401,
      "unauthorized",
    );
    await expectError(
      await call(row, path, { ...body, sid: sid("A"), sids: [sid("A")], user: ADA }, { secret: "0".repeat(64) }),
      401,
      "unauthorized",
    );
    expect((await sessionRows()).map((r) => r.sid)).toEqual([sid("A")]);
  });
});

describe("POST /internal/auth/redeem with the session it signs in", () => {
  const JTI = "J".repeat(22);

  it("records the token and the session together; a replay (even naming another session) records neither", async () => {
    const { row } = await userWithProject("owner@example.net", "shop");
    const exp = now() + 120;
    const first = await call(row, "/internal/auth/redeem", {
      jti: JTI,
      exp,
      session: { sid: sid("A"), user: ADA, exp: now() + 3600 },
    });
    expect(first.status).toBe(200);
    expect(await active(row, sid("A"))).toBe(true);

    const replay = await call(row, "/internal/auth/redeem", {
      jti: JTI,
      exp,
      session: { sid: sid("B"), user: ADA, exp: now() + 3600 },
    });
    await expectError(replay, 409, "conflict");
    expect((await sessionRows()).map((r) => r.sid)).toEqual([sid("A")]);
  });

  it("a malformed session is refused before anything is recorded", async () => {
    const { row } = await userWithProject("owner@example.net", "shop");
    const response = await call(row, "/internal/auth/redeem", {
      jti: JTI,
      exp: now() + 120,
      session: { sid: "x", user: ADA, exp: now() + 3600 },
    });
    await expectError(response, 400, "invalid_input");
    const tokens = await env.DB.prepare("SELECT COUNT(*) AS n FROM redeemed_callback_tokens").first<{ n: number }>();
    expect(tokens!.n).toBe(0);
    expect(await sessionRows()).toEqual([]);
  });
});
