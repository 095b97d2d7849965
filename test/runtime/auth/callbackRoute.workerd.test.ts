import { env as testEnv } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { auth } from "#src/runtime/auth/index.ts";
import { openSession } from "#src/runtime/auth/sessionSeal.ts";
import { bindingHash, verifySignInStart } from "#src/core/callbackToken.ts";
import {
  DEPLOYED_PRIVATE,
  DEPLOYED_PUBLIC,
  LOCAL_PUBLIC,
  LOGIN_URL,
  OTHER_SECRET,
  PROJECT_ID,
  platformApi,
  postCallback,
  SECRET,
  SLUG,
  bindCookieName,
  callback,
  callbackToken,
  cookieNamed,
  envOf,
  expectNoSession,
  send,
  sessionPair,
  startIdpFlow,
  type Mode,
} from "#test/support/workerd/index.ts";

beforeEach(() => auth.allow());

const LOCAL_PRIVATE_OIDC: Mode = { ...LOCAL_PUBLIC, private: true, loginUrl: "http://127.0.0.1:9000" };

const DEPLOYED: [string, Mode][] = [
  ["public", DEPLOYED_PUBLIC],
  ["private", DEPLOYED_PRIVATE],
];

describe("GET /api/auth/signin/idp when deployed: binding cookie, then the login worker", () => {
  it.each(DEPLOYED)(
    "%s: 302 to PLATFORM_LOGIN_URL/start with project, project-relative redirect and the cookie's hash",
    async (_label, mode) => {
      const flow = await startIdpFlow(mode, "/dash?tab=1");
      expect(flow.location.origin + flow.location.pathname).toBe(`${LOGIN_URL}/start`);
      expect(Object.fromEntries(flow.location.searchParams)).toEqual({
        project: SLUG,
        redirect: "/dash?tab=1",
        bind: await bindingHash(flow.bindValue),
        exp: expect.stringMatching(/^\d+$/),
        sig: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      });
      expect(flow.bindValue).toMatch(/^[A-Za-z0-9_-]{43}$/); // 32 random bytes
      expect(flow.response.headers.get("cache-control")).toBe("no-store");
    },
  );

  it("the binding cookie: __Host- on public, __Secure-…_<slug> with Path=/<slug> on private; HttpOnly, SameSite=None (it must ride the login worker's cross-site POST), Secure, 10 minutes", async () => {
    const pub = cookieNamed((await startIdpFlow(DEPLOYED_PUBLIC)).response, "__Host-platform_bind");
    expect(pub?.attributes).toEqual({ path: "/", "max-age": "600", httponly: "", samesite: "None", secure: "" });
    const priv = cookieNamed((await startIdpFlow(DEPLOYED_PRIVATE)).response, `__Secure-platform_bind_${SLUG}`);
    expect(priv?.attributes).toEqual({
      path: `/${SLUG}`,
      "max-age": "600",
      httponly: "",
      samesite: "None",
      secure: "",
    });
  });

  it.each(DEPLOYED)(
    "%s: the start is signed with the project's secret over project, path, binding and expiry",
    async (_label, mode) => {
      const flow = await startIdpFlow(mode, "/dash");
      const q = flow.location.searchParams;
      const start = { slug: SLUG, redirect: "/dash", bind: q.get("bind")!, exp: q.get("exp"), sig: q.get("sig") };
      expect(await verifySignInStart(SECRET, PROJECT_ID, start)).toBe("ok");
      expect(await verifySignInStart(OTHER_SECRET, PROJECT_ID, start)).toBe("bad_signature");
      expect(await verifySignInStart(SECRET, PROJECT_ID + 1, start)).toBe("bad_signature");
      expect(await verifySignInStart(SECRET, PROJECT_ID, { ...start, bind: await bindingHash("mine") })).toBe(
        "bad_signature",
      );
    },
  );

  it("locally with PLATFORM_LOGIN_URL bound (local OIDC) the same flow runs with unprefixed cookies; only the binding cookie is Secure (SameSite=None needs it; http://localhost is a secure context)", async () => {
    const mode = { ...LOCAL_PUBLIC, loginUrl: "http://127.0.0.1:9000/" };
    const flow = await startIdpFlow(mode);
    expect(flow.location.href.startsWith("http://127.0.0.1:9000/start?")).toBe(true);
    expect(cookieNamed(flow.response, "platform_bind")?.attributes).toEqual({
      path: "/",
      "max-age": "600",
      httponly: "",
      samesite: "None",
      secure: "",
    });
    const response = await callback(mode, await callbackToken(flow.bindValue), [flow.bindCookie]);
    expect(response.status).toBe(303);
    expect(cookieNamed(response, "platform_session")?.attributes.secure).toBeUndefined();
  });

  it.each(["//evil.example", "/\\evil.example", "https://evil.example", "%2F%2Fevil.example", "javascript:alert(1)"])(
    "hostile redirect %j is sent to the login worker as /",
    async (redirect) => {
      for (const mode of [DEPLOYED_PUBLIC, DEPLOYED_PRIVATE]) {
        const flow = await startIdpFlow(mode, redirect);
        expect(flow.location.searchParams.get("redirect")).toBe("/");
      }
    },
  );

  it("without a PLATFORM_LOGIN_URL binding, sign-in answers 503 and sets nothing", async () => {
    const response = await send(DEPLOYED_PUBLIC, "/api/auth/signin/idp", {
      env: envOf(DEPLOYED_PUBLIC, { PLATFORM_LOGIN_URL: undefined }),
    });
    expect(response.status).toBe(503);
    expect(response.headers.getSetCookie()).toEqual([]);
    expect(await response.text()).toContain("PLATFORM_LOGIN_URL");
  });

  it("without a worker secret (a broken deployment), every sign-in route answers 503", async () => {
    const env = envOf(DEPLOYED_PUBLIC, { PLATFORM_WORKER_SECRET: undefined });
    for (const path of ["/api/auth/signin/idp", "/api/auth/callback?token=x", "/api/auth/signout"]) {
      const response = await send(DEPLOYED_PUBLIC, path, { env, headers: { "sec-fetch-site": "same-origin" } });
      expect(response.status).toBe(503);
      expect(response.headers.getSetCookie()).toEqual([]);
    }
  });
});

describe("POST /api/auth/callback: success", () => {
  it.each(DEPLOYED)(
    "%s: fresh session, binding cookie cleared, 303 to the token's rdr under the base path, no Referer, not cached",
    async (_label, mode) => {
      const flow = await startIdpFlow(mode, "/dash");
      const token = await callbackToken(flow.bindValue, {
        email: "ada@EXAMPLE.com",
        name: "Ada",
        picture: "https://img.example/ada.png",
        rdr: "/dash?tab=1",
      });
      const response = await callback(mode, token, [flow.bindCookie]);
      expect(response.status).toBe(303);
      expect(response.headers.get("location")).toBe(`${mode.private ? "/shop" : ""}/dash?tab=1`);
      expect(response.headers.get("referrer-policy")).toBe("no-referrer");
      expect(response.headers.get("cache-control")).toBe("no-store");
      const bind = cookieNamed(response, bindCookieName(mode));
      expect(bind).toMatchObject({ value: "", attributes: { "max-age": "0", path: mode.private ? "/shop" : "/" } });
      const record = await openSession(SECRET, sessionPair(response, mode).split("=")[1]!);
      expect(record).toMatchObject({
        pid: PROJECT_ID,
        email: "ada@example.com",
        name: "Ada",
        picture: "https://img.example/ada.png",
      });
      const me = await send(mode, "/api/private/me", { cookies: [sessionPair(response, mode)] });
      expect(await me.json()).toEqual({
        email: "ada@example.com",
        name: "Ada",
        picture: "https://img.example/ada.png",
      });
    },
  );

  it("a picture that is not an http(s) URL is dropped", async () => {
    const flow = await startIdpFlow(DEPLOYED_PUBLIC);
    const response = await callback(
      DEPLOYED_PUBLIC,
      await callbackToken(flow.bindValue, { picture: "javascript:alert(1)" }),
      [flow.bindCookie],
    );
    const record = await openSession(SECRET, sessionPair(response, DEPLOYED_PUBLIC).split("=")[1]!);
    expect(record?.picture).toBeUndefined();
  });

  it.each([
    "//evil.example",
    "/\\evil.example",
    "https://evil.example",
    "%2F%2Fevil.example",
    "javascript:alert(1)",
    "/../other-project/",
  ])("a token whose rdr is %j lands on <basePath>/", async (rdr) => {
    for (const mode of [DEPLOYED_PUBLIC, DEPLOYED_PRIVATE]) {
      const flow = await startIdpFlow(mode);
      const response = await callback(mode, await callbackToken(flow.bindValue, { rdr }), [flow.bindCookie]);
      expect(response.status).toBe(303);
      expect(response.headers.get("location")).toBe(mode.private ? "/shop/" : "/");
    }
  });
});

describe("POST /api/auth/callback: refusals (clear status, no session, binding cookie cleared, token not shown)", () => {
  const now = Date.now();
  const rows: [
    string,
    number,
    RegExp,
    (flow: { bindValue: string; bindCookie: string }) => Promise<{ token: string; cookies: string[] }>,
  ][] = [
    ["no token", 400, /malformed/, async (f) => ({ token: "", cookies: [f.bindCookie] })],
    ["garbage token", 400, /malformed/, async (f) => ({ token: "not-a-token", cookies: [f.bindCookie] })],
    [
      "altered payload (one character)",
      401,
      /signature/,
      async (f) => {
        const token = await callbackToken(f.bindValue);
        const [v, payload, sig] = token.split(".");
        const at = 10;
        return {
          token: `${v}.${payload!.slice(0, at)}${payload![at] === "A" ? "B" : "A"}${payload!.slice(at + 1)}.${sig}`,
          cookies: [f.bindCookie],
        };
      },
    ],
    [
      "altered signature",
      401,
      /signature/,
      async (f) => {
        const token = await callbackToken(f.bindValue);
        return { token: token.slice(0, -2) + (token.endsWith("AA") ? "BA" : "AA"), cookies: [f.bindCookie] };
      },
    ],
    [
      "expired (issued 121 s ago)",
      401,
      /expired/,
      async (f) => ({ token: await callbackToken(f.bindValue, { nowMS: now - 121_000 }), cookies: [f.bindCookie] }),
    ],
    [
      "signed with another project's secret",
      401,
      /signature/,
      async (f) => ({ token: await callbackToken(f.bindValue, { secret: OTHER_SECRET }), cookies: [f.bindCookie] }),
    ],
    [
      "minted for another project id",
      401,
      /another app/,
      async (f) => ({ token: await callbackToken(f.bindValue, { pid: PROJECT_ID + 1 }), cookies: [f.bindCookie] }),
    ],
    [
      "without the binding cookie (another browser)",
      401,
      /another browser/,
      async (f) => ({ token: await callbackToken(f.bindValue), cookies: [] }),
    ],
    [
      "with another flow's binding cookie",
      401,
      /another browser/,
      async (f) => ({
        token: await callbackToken("someone-elses-binding-value-000000000000000"),
        cookies: [f.bindCookie],
      }),
    ],
  ];
  for (const [label, mode] of DEPLOYED) {
    it.each(rows)(`${label}: %s → %i`, async (_name, status, reason, make) => {
      const flow = await startIdpFlow(mode);
      const { token, cookies } = await make(flow);
      const response = await callback(mode, token, cookies);
      expect(response.status).toBe(status);
      const html = await response.text();
      expect(html).toMatch(reason);
      if (token) expect(html).not.toContain(token.slice(3, 40));
      expectNoSession(response, mode);
      expect(cookieNamed(response, bindCookieName(mode))?.attributes["max-age"]).toBe("0");
      expect(response.headers.get("referrer-policy")).toBe("no-referrer");
      expect(response.headers.get("cache-control")).toBe("no-store");
    });
  }

  it("a token is accepted once: replaying the same POST (same body, same cookies) signs nobody in", async () => {
    const flow = await startIdpFlow(DEPLOYED_PUBLIC);
    const token = await callbackToken(flow.bindValue);
    const first = await callback(DEPLOYED_PUBLIC, token, [flow.bindCookie]);
    expect(first.status).toBe(303);
    // An attacker who recorded the request replays it byte for byte, binding cookie included.
    const replay = await callback(DEPLOYED_PUBLIC, token, [flow.bindCookie]);
    expect(replay.status).toBe(401);
    expect(await replay.text()).toMatch(/already used/);
    expectNoSession(replay, DEPLOYED_PUBLIC);
    // The browser itself (binding cookie gone, session set) and another browser get nothing either.
    expect((await callback(DEPLOYED_PUBLIC, token, [sessionPair(first, DEPLOYED_PUBLIC)])).status).toBe(401);
    expect((await callback(DEPLOYED_PUBLIC, token, [])).status).toBe(401);
  });

  it("the popup attack: a neighbour's page starts a sign-in with its own binding and relays the token; the project refuses it", async () => {
    // Project B chose the binding value, so the token is bound to B's value, not to a cookie this project set.
    // (The login worker now also refuses such a start: test/workers/login/startRoute.workerd.test.ts.)
    for (const mode of [DEPLOYED_PRIVATE, LOCAL_PRIVATE_OIDC]) {
      const neighbour = "neighbour-chosen-binding-value-0000000000000";
      const token = await callbackToken(neighbour);
      const victim = await startIdpFlow(mode);
      for (const cookies of [[], [victim.bindCookie]]) {
        const response = await callback(mode, token, cookies);
        expect(response.status).toBe(401);
        expectNoSession(response, mode);
      }
    }
  });

  it("without a PLATFORM_API binding, or when the platform cannot record the token, nobody is signed in (503)", async () => {
    const broken = {
      fetch: async () => new Response("boom", { status: 500 }),
    } as unknown as Fetcher;
    const failing = {
      fetch: async () => {
        throw new Error("network down");
      },
    } as unknown as Fetcher;
    for (const api of [undefined, broken, failing]) {
      const env = envOf(DEPLOYED_PUBLIC, { PLATFORM_API: api });
      const flow = await startIdpFlow(DEPLOYED_PUBLIC, "/", env);
      const response = await callback(DEPLOYED_PUBLIC, await callbackToken(flow.bindValue), [flow.bindCookie], env);
      expect(response.status).toBe(503);
      expectNoSession(response, DEPLOYED_PUBLIC);
    }
  });

  it("when the project is at its cap of live sessions (the platform answers 403), nobody is signed in (503 naming the limit)", async () => {
    const full = {
      fetch: async () => Response.json({ error: { code: "quota_exceeded", message: "full" } }, { status: 403 }),
    } as unknown as Fetcher;
    const env = envOf(DEPLOYED_PUBLIC, { PLATFORM_API: full });
    const flow = await startIdpFlow(DEPLOYED_PUBLIC, "/", env);
    const response = await callback(DEPLOYED_PUBLIC, await callbackToken(flow.bindValue), [flow.bindCookie], env);
    expect(response.status).toBe(503);
    expectNoSession(response, DEPLOYED_PUBLIC);
    expect(await response.text()).toContain("limit of live sign-in sessions");
  });

  it("the token's redemption records the session it signs in: the cookie works, and its session is in the platform's records", async () => {
    const flow = await startIdpFlow(DEPLOYED_PUBLIC);
    const response = await callback(DEPLOYED_PUBLIC, await callbackToken(flow.bindValue), [flow.bindCookie]);
    const cookie = sessionPair(response, DEPLOYED_PUBLIC);
    const record = (await openSession(SECRET, cookie.split("=")[1]!))!;
    const row = await testEnv.DB.prepare("SELECT expires_at FROM project_sessions WHERE project_id = ? AND sid = ?")
      .bind(PROJECT_ID, record.sid)
      .first<{ expires_at: number }>();
    expect(row).toEqual({ expires_at: record.exp });
  });

  it("one call to the platform per sign-in, none for a token refused before", async () => {
    const flow = await startIdpFlow(DEPLOYED_PUBLIC);
    const before = platformApi.calls;
    await callback(DEPLOYED_PUBLIC, await callbackToken(flow.bindValue), [flow.bindCookie]);
    expect(platformApi.calls - before).toBe(1);
    await callback(DEPLOYED_PUBLIC, await callbackToken("another-browser-binding-00000000000000000000"), [
      flow.bindCookie,
    ]);
    expect(platformApi.calls - before).toBe(1);
  });

  it("the domain rule is re-applied to the token's email: refused with 403, no session", async () => {
    auth.allow({ domains: ["example.com"] });
    for (const email of ["a@example.com.evil.io", "a@sub.example.com", "a@b@example.com", '"a@b"@example.com']) {
      const flow = await startIdpFlow(DEPLOYED_PRIVATE);
      const response = await callback(DEPLOYED_PRIVATE, await callbackToken(flow.bindValue, { email }), [
        flow.bindCookie,
      ]);
      expect(response.status, email).toBe(403);
      expectNoSession(response, DEPLOYED_PRIVATE);
    }
    const flow = await startIdpFlow(DEPLOYED_PRIVATE);
    const ok = await callback(DEPLOYED_PRIVATE, await callbackToken(flow.bindValue, { email: "a@EXAMPLE.COM" }), [
      flow.bindCookie,
    ]);
    expect(ok.status).toBe(303);
  });

  it("a planted session cookie is replaced by a fresh one at the callback", async () => {
    const flow = await startIdpFlow(DEPLOYED_PUBLIC);
    const planted = "__Host-platform_session=v1.plantedvalue";
    const response = await callback(DEPLOYED_PUBLIC, await callbackToken(flow.bindValue), [flow.bindCookie, planted]);
    const fresh = sessionPair(response, DEPLOYED_PUBLIC);
    expect(fresh).not.toBe(planted);
    expect(await openSession(SECRET, fresh.split("=")[1]!)).toMatchObject({ email: "ada@example.com" });
  });
});

describe("POST /api/auth/callback: bodies that are not the login worker's form", () => {
  const rows: [string, number, RegExp, (token: string) => { body: string; type?: string }][] = [
    [
      "JSON instead of a form",
      400,
      /x-www-form-urlencoded/,
      (t) => ({ body: JSON.stringify({ token: t }), type: "application/json" }),
    ],
    ["no content type", 400, /x-www-form-urlencoded/, (t) => ({ body: `token=${t}`, type: "" })],
    ["an empty form", 400, /malformed/, () => ({ body: "" })],
    ["two token fields", 400, /malformed/, (t) => ({ body: `token=${t}&token=${t}` })],
    ["a body over 8 KiB", 413, /larger than 8192 bytes/, (t) => ({ body: `token=${t}&pad=${"x".repeat(9000)}` })],
    ["percent-encoded garbage", 400, /malformed/, () => ({ body: "token=%FF%FE" })],
    ["an oversized token", 400, /malformed/, () => ({ body: `token=v1.${"A".repeat(6000)}.${"B".repeat(43)}` })],
  ];
  it.each(rows)("%s → %i, no session", async (_name, status, reason, make) => {
    const flow = await startIdpFlow(DEPLOYED_PRIVATE);
    const { body, type } = make(await callbackToken(flow.bindValue));
    const response = await postCallback(DEPLOYED_PRIVATE, body, [flow.bindCookie], undefined, type);
    expect(response.status).toBe(status);
    expect(await response.text()).toMatch(reason);
    expectNoSession(response, DEPLOYED_PRIVATE);
  });
});

describe("GET /api/auth/callback: the token never travels in a URL", () => {
  it.each([
    ["with a valid token in the query", true],
    ["without a token", false],
  ])("%s → 405 page saying to start again; nothing is set, nobody signed in", async (_name, withToken) => {
    for (const mode of [DEPLOYED_PUBLIC, DEPLOYED_PRIVATE, LOCAL_PRIVATE_OIDC]) {
      const flow = await startIdpFlow(mode);
      const token = await callbackToken(flow.bindValue);
      const path = withToken ? `/api/auth/callback?token=${encodeURIComponent(token)}` : "/api/auth/callback";
      const response = await send(mode, path, { cookies: [flow.bindCookie] });
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toBe("POST");
      expect(response.headers.getSetCookie()).toEqual([]);
      expect(response.headers.get("cache-control")).toBe("no-store");
      expect(await response.text()).toMatch(/start sign-in again/);
      // The token was not spent: the real POST still works once.
      expect((await callback(mode, token, [flow.bindCookie])).status).toBe(303);
    }
  });
});
