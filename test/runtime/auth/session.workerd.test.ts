import { env as testEnv } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { auth, readSessionUser } from "#src/runtime/auth/index.ts";
import { userKeyOf } from "#src/runtime/auth/session.ts";
import { SESSION_RECHECK_MS, SessionCache } from "#src/runtime/auth/sessionCache.ts";
import { fromBase64url, base64url } from "#src/core/crypto/encoding.ts";
import { openSession } from "#src/runtime/auth/sessionSeal.ts";
import {
  DEPLOYED_PRIVATE,
  DEPLOYED_PUBLIC,
  envOf,
  LOCAL_PRIVATE,
  LOCAL_PUBLIC,
  MODES,
  OTHER_SECRET,
  PROJECT_ID,
  SECRET,
  SLUG,
  basePathOf,
  cookieNamed,
  openLocalForm,
  originOf,
  platformApi,
  postLocalForm,
  sealedSession,
  send,
  sessionCookieName,
  sessionPair,
  signIn,
  signInResponse,
  type Mode,
} from "#test/support/workerd/index.ts";

beforeEach(() => auth.allow({ sessionMaxAge: 3600 }));

async function whoami(mode: Mode, cookie?: string): Promise<unknown> {
  const response = await send(mode, "/whoami", { cookies: cookie ? [cookie] : [] });
  expect(response.status).toBe(200);
  return ((await response.json()) as { user: unknown }).user;
}

async function privateMe(mode: Mode, cookie?: string): Promise<Response> {
  return send(mode, "/api/private/me?x=1", { cookies: cookie ? [cookie] : [] });
}

describe("the session cookie's attributes, per mode (read from Set-Cookie)", () => {
  const expected: [string, Mode, { name: string; path: string; secure: boolean }][] = [
    ["local public", LOCAL_PUBLIC, { name: "platform_session", path: "/", secure: false }],
    ["local private", LOCAL_PRIVATE, { name: `platform_session_${SLUG}`, path: `/${SLUG}`, secure: false }],
    ["deployed public", DEPLOYED_PUBLIC, { name: "__Host-platform_session", path: "/", secure: true }],
    [
      "deployed private",
      DEPLOYED_PRIVATE,
      { name: `__Secure-platform_session_${SLUG}`, path: `/${SLUG}`, secure: true },
    ],
  ];
  it.each(expected)(
    "%s: name, HttpOnly, SameSite=Lax, Path, Max-Age = sessionMaxAge, Secure only when deployed, no Domain",
    async (_label, mode, want) => {
      auth.allow({ sessionMaxAge: 4321 });
      const response = await signInResponse(mode);
      const cookie = cookieNamed(response, want.name);
      expect(cookie, `Set-Cookie ${want.name} in ${JSON.stringify(response.headers.getSetCookie())}`).toBeDefined();
      expect(cookie!.value).toMatch(/^v1\.[A-Za-z0-9_-]+$/);
      expect(cookie!.attributes).toEqual({
        path: want.path,
        "max-age": "4321",
        httponly: "",
        samesite: "Lax",
        ...(want.secure ? { secure: "" } : {}),
      });
    },
  );

  it("reading a session never re-issues the cookie (no sliding renewal)", async () => {
    const cookie = await signIn(DEPLOYED_PUBLIC);
    const response = await send(DEPLOYED_PUBLIC, "/whoami", { cookies: [cookie] });
    expect(response.headers.getSetCookie()).toEqual([]);
  });
});

describe("auth.user and auth.require with a valid session", () => {
  it.each(MODES.map((m) => [m.name, m] as const))(
    "%s: the user is read back; the protected route answers",
    async (_name, mode) => {
      const cookie = await signIn(mode, "ada@example.com", "Ada Lovelace");
      expect(await whoami(mode, cookie)).toEqual({ email: "ada@example.com", name: "Ada Lovelace" });
      const response = await privateMe(mode, cookie);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ email: "ada@example.com", name: "Ada Lovelace" });
    },
  );

  it.each(MODES.map((m) => [m.name, m] as const))(
    "%s: without a session, auth.user is null and require() answers 401 naming the sign-in URL",
    async (_name, mode) => {
      expect(await whoami(mode)).toBeNull();
      const response = await privateMe(mode);
      expect(response.status).toBe(401);
      expect(response.headers.get("cache-control")).toBe("no-store");
      const signInUrl = `${originOf(mode)}${basePathOf(mode)}/api/auth/signin/idp?redirect=${encodeURIComponent("/api/private/me?x=1")}`;
      expect(await response.json()).toEqual({
        error: { code: "unauthorized", message: `Sign in required: ${signInUrl}` },
      });
    },
  );
});

describe("cookies that must not sign anybody in: auth.user is null and require() is 401", () => {
  const now = Math.floor(Date.now() / 1000);
  const flip = (value: string, at: number) => {
    const bytes = fromBase64url(value.slice(3))!;
    bytes[at]! ^= 0x01;
    return "v1." + base64url(bytes);
  };
  const cases: [string, () => Promise<string>][] = [
    ["forged (random bytes)", async () => "v1." + base64url(crypto.getRandomValues(new Uint8Array(120)))],
    [
      "plain JSON, not sealed",
      async () =>
        JSON.stringify({ pid: PROJECT_ID, email: "ada@example.com", name: "Ada", iat: now, exp: now + 3600, sid: "x" }),
    ],
    ["altered: one bit of the IV flipped", async () => flip(await sealedSession(), 0)],
    ["altered: one bit of the ciphertext flipped", async () => flip(await sealedSession(), 20)],
    [
      "altered: one bit of the tag flipped",
      async () => {
        const v = await sealedSession();
        return flip(v, fromBase64url(v.slice(3))!.length - 1);
      },
    ],
    ["truncated", async () => (await sealedSession()).slice(0, -6)],
    ["expired (exp in the past)", async () => sealedSession({ iat: now - 7200, exp: now - 1 })],
    [
      "older than the current sessionMaxAge (iat + 3600 s passed, exp still ahead)",
      async () => sealedSession({ iat: now - 3601, exp: now + 86_400 }),
    ],
    ["issued in the future", async () => sealedSession({ iat: now + 3600, exp: now + 7200 })],
    ["another project's secret", async () => sealedSession({}, OTHER_SECRET)],
    ["this secret but another project id", async () => sealedSession({ pid: PROJECT_ID + 1 })],
    ["an email that is not an address", async () => sealedSession({ email: "ada" })],
  ];
  it.each(cases)("%s", async (_label, make) => {
    for (const mode of [LOCAL_PUBLIC, DEPLOYED_PRIVATE]) {
      const cookie = `${sessionCookieName(mode)}=${await make()}`;
      expect(await whoami(mode, cookie)).toBeNull();
      const response = await privateMe(mode, cookie);
      expect(response.status).toBe(401);
      expect(response.headers.getSetCookie()).toEqual([]);
    }
  });

  it("a valid session under another mode's cookie name is not read (public name on a private deployment and vice versa)", async () => {
    const value = await sealedSession();
    expect(await whoami(DEPLOYED_PRIVATE, `${sessionCookieName(DEPLOYED_PUBLIC)}=${value}`)).toBeNull();
    expect(await whoami(DEPLOYED_PUBLIC, `${sessionCookieName(DEPLOYED_PRIVATE)}=${value}`)).toBeNull();
    expect(await whoami(DEPLOYED_PUBLIC, `${sessionCookieName(DEPLOYED_PUBLIC)}=${value}`)).toEqual({
      email: "ada@example.com",
      name: "Ada",
    });
  });

  it("a session from an address the domain rule now refuses stops working when domains are restricted", async () => {
    const cookie = `${sessionCookieName(LOCAL_PUBLIC)}=${await sealedSession({ email: "eve@other.org" })}`;
    expect(await whoami(LOCAL_PUBLIC, cookie)).toEqual({ email: "eve@other.org", name: "Ada" });
    auth.allow({ domains: ["example.com"] });
    expect(await whoami(LOCAL_PUBLIC, cookie)).toBeNull();
  });

  it("a planted invalid cookie on a deeper path does not hide the real one (every same-named value is tried)", async () => {
    const real = await signIn(LOCAL_PUBLIC);
    const planted = `${sessionCookieName(LOCAL_PUBLIC)}=v1.${base64url(crypto.getRandomValues(new Uint8Array(64)))}`;
    expect(await whoami(LOCAL_PUBLIC, `${planted}; ${real}`)).toEqual({
      email: "ada@example.com",
      name: "Ada Lovelace",
    });
  });

  it("the session is read from the cookie only: a session value in a header or the query is ignored", async () => {
    const value = await sealedSession();
    const viaHeader = await send(LOCAL_PUBLIC, "/whoami", {
      headers: { authorization: `Bearer ${value}`, "x-platform-session": value },
    });
    expect(await viaHeader.json()).toEqual({ user: null });
    const viaQuery = await send(LOCAL_PUBLIC, `/whoami?platform_session=${encodeURIComponent(value)}`);
    expect(await viaQuery.json()).toEqual({ user: null });
  });
});

describe("the session record", () => {
  it("carries pid, email, name, iat, exp = iat + sessionMaxAge and a random sid; each sign-in mints a new one", async () => {
    auth.allow({ sessionMaxAge: 600 });
    const first = (await signIn(LOCAL_PUBLIC)).split("=")[1]!;
    const second = (await signIn(LOCAL_PUBLIC)).split("=")[1]!;
    const a = (await openSession(SECRET, first))!;
    const b = (await openSession(SECRET, second))!;
    expect(a).toMatchObject({ pid: PROJECT_ID, email: "ada@example.com", name: "Ada Lovelace" });
    expect(a.exp - a.iat).toBe(600);
    expect(a.sid).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(b.sid).not.toBe(a.sid);
  });
});

describe("readSessionUser (what auth.user does, for benchmarks)", () => {
  it("reads a signed-in request given the env explicitly, and honours an injected clock", async () => {
    const value = await sealedSession();
    const request = new Request("https://shop.example.app/", {
      headers: { cookie: `__Host-platform_session=${value}` },
    });
    const env = envOf(DEPLOYED_PUBLIC);
    expect(await readSessionUser(request, env)).toEqual({ email: "ada@example.com", name: "Ada" });
    expect(await readSessionUser(request, env, Date.now() + 3601_000)).toBeNull();
  });
});

describe("auth.require() with Hono-style and plain fetch usage", () => {
  it("returns a 401 Response without a session and undefined with one, for the raw request", async () => {
    const cookie = await signIn(LOCAL_PUBLIC);
    // Requests user code builds itself have no base path and use the latest environment.
    const anonymous = new Request("http://127.0.0.1:8787/api/x");
    const denied = await auth.require()(anonymous);
    expect(denied?.status).toBe(401);
    const signedIn = new Request("http://127.0.0.1:8787/api/x", { headers: { cookie } });
    expect(await auth.require()(signedIn)).toBeUndefined();
    expect(await auth.user({ req: { raw: signedIn } })).toEqual({ email: "ada@example.com", name: "Ada Lovelace" });
  });

  it("auth.user refuses something that is not a request, with a clear error", async () => {
    await expect(auth.user({} as Request)).rejects.toMatchObject({ code: "invalid_input" });
  });
});

describe("a session is a session only while the platform records it", () => {
  const request = (value: string) =>
    new Request("https://shop.example.app/", { headers: { cookie: `__Host-platform_session=${value}` } });

  it("a cookie sealed with the project's secret but never recorded (not minted by a sign-in) reads as nobody", async () => {
    const value = await sealedSession({}, SECRET, { recorded: false });
    expect(await readSessionUser(request(value), envOf(DEPLOYED_PUBLIC), Date.now(), new SessionCache())).toBeNull();
    const cookie = `${sessionCookieName(DEPLOYED_PUBLIC)}=${value}`;
    expect((await privateMe(DEPLOYED_PUBLIC, cookie)).status).toBe(401);
  });

  it("a sign-in records its session (user key, never the address; exp = the cookie's)", async () => {
    auth.allow({ sessionMaxAge: 600 });
    for (const mode of [LOCAL_PUBLIC, DEPLOYED_PUBLIC]) {
      const cookie = await signIn(mode, "Ada@example.com");
      const record = (await openSession(SECRET, cookie.split("=")[1]!))!;
      const row = await testEnv.DB.prepare(
        "SELECT project_id, user_key, expires_at FROM project_sessions WHERE sid = ?",
      )
        .bind(record.sid)
        .first();
      expect(row).toEqual({
        project_id: PROJECT_ID,
        user_key: await userKeyOf("ada@example.com"),
        expires_at: record.exp,
      });
      expect(JSON.stringify(row)).not.toContain("example.com");
    }
  });

  it("an isolate asks the platform about a session once per SESSION_RECHECK_MS; concurrent first looks share one question", async () => {
    const value = await sealedSession();
    const isolate = new SessionCache();
    const t0 = Date.now();
    const before = platformApi.calls;
    const reads = await Promise.all(
      Array.from({ length: 5 }, () => readSessionUser(request(value), envOf(DEPLOYED_PUBLIC), t0, isolate)),
    );
    expect(reads.every((user) => user?.email === "ada@example.com")).toBe(true);
    expect(platformApi.calls - before).toBe(1);
    await readSessionUser(request(value), envOf(DEPLOYED_PUBLIC), t0 + SESSION_RECHECK_MS - 1, isolate);
    expect(platformApi.calls - before).toBe(1);
    await readSessionUser(request(value), envOf(DEPLOYED_PUBLIC), t0 + SESSION_RECHECK_MS, isolate);
    expect(platformApi.calls - before).toBe(2);
  });

  it("when the platform cannot be asked, the session cannot be vouched for: nobody (require() 401), and nothing is remembered", async () => {
    const value = await sealedSession();
    const isolate = new SessionCache();
    const failing: [string, Fetcher][] = [
      ["a 500", { fetch: async () => new Response("boom", { status: 500 }) } as unknown as Fetcher],
      [
        "no answer",
        {
          fetch: async () => {
            throw new Error("network down");
          },
        } as unknown as Fetcher,
      ],
    ];
    for (const [, api] of failing) {
      const env = envOf(DEPLOYED_PUBLIC, { PLATFORM_API: api });
      expect(await readSessionUser(request(value), env, Date.now(), isolate)).toBeNull();
    }
    const down = envOf(DEPLOYED_PUBLIC, { PLATFORM_API: failing[0]![1] });
    const cookie = `${sessionCookieName(DEPLOYED_PUBLIC)}=${value}`;
    expect((await send(DEPLOYED_PUBLIC, "/api/private/me", { cookies: [cookie], env: down })).status).toBe(401);
    // Once the platform answers again, the same isolate reads the session.
    expect(await readSessionUser(request(value), envOf(DEPLOYED_PUBLIC), Date.now(), isolate)).toEqual({
      email: "ada@example.com",
      name: "Ada",
    });
  });

  it("a local project without a platform (platform dev --node) keeps its sessions in the process: sign-in, sign-out, replay refused", async () => {
    const node = envOf(LOCAL_PUBLIC, { PLATFORM_API: undefined });
    const form = await openLocalForm(LOCAL_PUBLIC, "/", node);
    const signedIn = await postLocalForm(LOCAL_PUBLIC, {
      fields: { csrf: form.csrf, redirect: "/", email: "ada@example.com", name: "Ada", action: "login" },
      cookies: [form.nonceCookie],
      env: node,
    });
    const cookie = sessionPair(signedIn, LOCAL_PUBLIC);
    expect((await send(LOCAL_PUBLIC, "/api/private/me", { cookies: [cookie], env: node })).status).toBe(200);
    const out = await send(LOCAL_PUBLIC, "/api/auth/signout", {
      headers: { "sec-fetch-site": "same-origin" },
      cookies: [cookie],
      env: node,
    });
    expect(out.status).toBe(303);
    expect((await send(LOCAL_PUBLIC, "/api/private/me", { cookies: [cookie], env: node })).status).toBe(401);
    const request = new Request("http://127.0.0.1:8787/", { headers: { cookie } });
    expect(await readSessionUser(request, node, Date.now(), new SessionCache())).toBeNull();
  });

  it("a deployed worker without PLATFORM_API reads no session", async () => {
    const value = await sealedSession();
    const env = envOf(DEPLOYED_PUBLIC, { PLATFORM_API: undefined });
    expect(await readSessionUser(request(value), env, Date.now(), new SessionCache())).toBeNull();
  });
});
