import { beforeEach, describe, expect, it } from "vitest";
import { auth } from "#src/runtime/auth/index.ts";
import { openSession } from "#src/runtime/auth/sessionSeal.ts";
import {
  DEPLOYED_PRIVATE,
  DEPLOYED_PUBLIC,
  LOCAL_PRIVATE,
  LOCAL_PUBLIC,
  SECRET,
  cookieNamed,
  envOf,
  expectNoSession,
  openLocalForm,
  originOf,
  postLocalForm,
  sealedSession,
  send,
  sessionCookieName,
  sessionPair,
  type Mode,
} from "#test/support/workerd/index.ts";

beforeEach(() => auth.allow());

describe("GET /api/auth/signin/idp locally: the dummy form", () => {
  it("shows email, optional name, Login and Cancel; cannot be framed; is not cached", async () => {
    const form = await openLocalForm(LOCAL_PUBLIC, "/dash");
    expect(form.page).toContain('name="email"');
    expect(form.page).toContain('name="name"');
    expect(form.page).toMatch(/<button[^>]*value="login"[^>]*>Login<\/button>/);
    expect(form.page).toMatch(/<button[^>]*value="cancel"[^>]*>Cancel<\/button>/);
    expect(form.redirect).toBe("/dash");
    const headers = form.response.headers;
    expect(headers.get("x-frame-options")).toBe("DENY");
    expect(headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(headers.get("cache-control")).toBe("no-store");
    expect(headers.get("content-type")).toBe("text/html; charset=utf-8");
  });

  it("sets the CSRF nonce in a short-lived HttpOnly SameSite=Strict cookie scoped like the session", async () => {
    for (const [mode, name, path] of [
      [LOCAL_PUBLIC, "platform_csrf", "/"],
      [LOCAL_PRIVATE, "platform_csrf_shop", "/shop"],
    ] as const) {
      const form = await openLocalForm(mode);
      const nonce = cookieNamed(form.response, name);
      expect(nonce?.attributes).toEqual({ path, "max-age": "600", httponly: "", samesite: "Strict" });
      expect(form.page).toContain(`action="${mode === LOCAL_PRIVATE ? "/shop" : ""}/api/auth/signin/idp"`);
    }
  });

  it("names the allowed domains when auth.allow({ domains }) restricts them", async () => {
    auth.allow({ domains: ["example.com", "example.org"] });
    const form = await openLocalForm(LOCAL_PUBLIC);
    expect(form.page).toContain("<code>example.com</code>, <code>example.org</code>");
  });
});

async function login(
  mode: Mode,
  fields: Record<string, string>,
  extra: { cookies?: string[]; headers?: Record<string, string> } = {},
): Promise<Response> {
  const form = await openLocalForm(mode, fields.redirect ?? "/");
  return postLocalForm(mode, {
    fields: { csrf: form.csrf, redirect: form.redirect, action: "login", ...fields },
    cookies: [form.nonceCookie, ...(extra.cookies ?? [])],
    headers: extra.headers,
  });
}

describe("POST /api/auth/signin/idp: Login", () => {
  it("creates a session and 303s to the requested page; the name defaults to the email's local part", async () => {
    const response = await login(LOCAL_PUBLIC, { email: "grace@example.com", redirect: "/dash?tab=1" });
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe("/dash?tab=1");
    const value = sessionPair(response, LOCAL_PUBLIC).split("=")[1]!;
    expect(await openSession(SECRET, value)).toMatchObject({ email: "grace@example.com", name: "grace" });
    // The one-time CSRF nonce is cleared.
    expect(cookieNamed(response, "platform_csrf")?.attributes["max-age"]).toBe("0");
  });

  it("on a private deployment the landing page keeps the /<slug> prefix", async () => {
    const response = await login(LOCAL_PRIVATE, { email: "grace@example.com", redirect: "/dash" });
    expect(response.headers.get("location")).toBe("/shop/dash");
  });

  it("replaces a planted session cookie with a fresh one (never adopts it)", async () => {
    const planted = await sealedSession({ email: "mallory@example.com", name: "Mallory", sid: "planted" });
    const response = await login(
      LOCAL_PUBLIC,
      { email: "ada@example.com", name: "Ada" },
      { cookies: [`platform_session=${planted}`] },
    );
    expect(response.status).toBe(303);
    const value = sessionPair(response, LOCAL_PUBLIC).split("=")[1]!;
    expect(value).not.toBe(planted);
    const record = await openSession(SECRET, value);
    expect(record).toMatchObject({ email: "ada@example.com", name: "Ada" });
    expect(record!.sid).not.toBe("planted");
  });

  it.each([
    [
      "the platform unreachable",
      { fetch: async () => new Response("down", { status: 500 }) },
      "The platform could not record this sign-in, so nobody was signed in. Try again in a moment.",
    ],
    [
      "the project at its cap of live sessions (403)",
      { fetch: async () => Response.json({ error: { code: "quota_exceeded", message: "full" } }, { status: 403 }) },
      "This app has reached the platform's limit of live sign-in sessions, so nobody was signed in. Try again later.",
    ],
  ])("with %s, Login signs nobody in: 503 page, no session cookie", async (_name, api, message) => {
    const env = envOf(LOCAL_PUBLIC, { PLATFORM_API: api as unknown as Fetcher });
    const form = await openLocalForm(LOCAL_PUBLIC, "/", env);
    const response = await postLocalForm(LOCAL_PUBLIC, {
      fields: { csrf: form.csrf, redirect: "/", action: "login", email: "ada@example.com" },
      cookies: [form.nonceCookie],
      env,
    });
    expect(response.status).toBe(503);
    expectNoSession(response, LOCAL_PUBLIC);
    expect(await response.text()).toContain(message.replaceAll("'", "&#39;"));
  });

  it("accepts a POST without Origin when Sec-Fetch-Site says same-origin", async () => {
    const form = await openLocalForm(LOCAL_PUBLIC);
    const response = await send(LOCAL_PUBLIC, "/api/auth/signin/idp", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
      body: new URLSearchParams({
        csrf: form.csrf,
        redirect: "/",
        action: "login",
        email: "ada@example.com",
      }).toString(),
      cookies: [form.nonceCookie],
    });
    expect(response.status).toBe(303);
  });
});

describe('domain rule (domains: ["example.com"]): exact, case-insensitive match on the part after the single @', () => {
  const table: [string, number, string | null][] = [
    ["a@example.com", 303, "a@example.com"],
    ["a@EXAMPLE.COM", 303, "a@example.com"],
    ["A.B+tag@Example.Com", 303, "A.B+tag@example.com"],
    ["a@example.com.evil.io", 403, null],
    ["a@sub.example.com", 403, null],
    ["a@evil-example.com", 403, null],
    ["a@example.co", 403, null],
    ['"a@b"@example.com', 400, null],
    ['"a"@example.com', 400, null],
    ["a@b@example.com", 400, null],
    ["a @example.com", 400, null],
    ["a@example.com ", 400, null],
    ["a@exa mple.com", 400, null],
    ["a\t@example.com", 400, null],
    ["a@localhost", 400, null],
    ["a@", 400, null],
    ["@example.com", 400, null],
    ["", 400, null],
  ];
  it.each(table)("%j → %i", async (email, status, stored) => {
    auth.allow({ domains: ["example.com"] });
    const response = await login(LOCAL_PUBLIC, { email });
    expect(response.status).toBe(status);
    if (stored) {
      const record = await openSession(SECRET, sessionPair(response, LOCAL_PUBLIC).split("=")[1]!);
      expect(record?.email).toBe(stored);
    } else {
      expectNoSession(response, LOCAL_PUBLIC);
      expect(response.headers.get("content-type")).toContain("text/html");
      expect(await response.text()).toContain("Sign-in refused");
    }
  });

  it("without domains every well-formed address may sign in, malformed ones still may not", async () => {
    expect((await login(LOCAL_PUBLIC, { email: "x@anything.example" })).status).toBe(303);
    expect((await login(LOCAL_PUBLIC, { email: "a@b@anything.example" })).status).toBe(400);
  });
});

describe("cross-site and forged posts of the form → 403, no session", () => {
  const rows: [
    string,
    (f: { csrf: string; nonceCookie: string }) => {
      fields?: Record<string, string>;
      cookies?: string[];
      headers?: Record<string, string>;
    },
  ][] = [
    ["foreign Origin", () => ({ headers: { origin: "https://evil.example" } })],
    ["Origin of another local port", () => ({ headers: { origin: "http://127.0.0.1:9999" } })],
    ["Origin: null (sandboxed frame, data: URL)", () => ({ headers: { origin: "null" } })],
    ["no Origin, Sec-Fetch-Site cross-site", () => ({ headers: { origin: "", "sec-fetch-site": "cross-site" } })],
    ["no Origin and no Sec-Fetch-Site", () => ({ headers: { origin: "" } })],
    ["missing CSRF token", () => ({ fields: { csrf: "" } })],
    ["forged CSRF token", () => ({ fields: { csrf: "A".repeat(43) } })],
    [
      "CSRF token with one character changed",
      (f) => ({ fields: { csrf: (f.csrf[0] === "A" ? "B" : "A") + f.csrf.slice(1) } }),
    ],
    ["no nonce cookie", () => ({ cookies: [] })],
    ["nonce cookie of another form", () => ({ cookies: ["platform_csrf=" + "Q".repeat(43)] })],
  ];
  it.each(rows)("%s", async (_label, change) => {
    const form = await openLocalForm(LOCAL_PUBLIC);
    const { fields, cookies, headers } = change(form);
    const allHeaders: Record<string, string> = {
      "content-type": "application/x-www-form-urlencoded",
      origin: originOf(LOCAL_PUBLIC),
      ...headers,
    };
    if (allHeaders.origin === "") delete allHeaders.origin;
    const response = await send(LOCAL_PUBLIC, "/api/auth/signin/idp", {
      method: "POST",
      headers: allHeaders,
      body: new URLSearchParams({
        csrf: form.csrf,
        redirect: "/",
        action: "login",
        email: "ada@example.com",
        ...fields,
      }).toString(),
      cookies: cookies ?? [form.nonceCookie],
    });
    expect(response.status).toBe(403);
    expect(response.headers.getSetCookie()).toEqual([]);
    expect(await response.text()).toMatch(/refused/i);
  });

  it("a form body that is not url-encoded is refused without a session", async () => {
    const form = await openLocalForm(LOCAL_PUBLIC);
    const body = new FormData();
    for (const [k, v] of Object.entries({ csrf: form.csrf, redirect: "/", action: "login", email: "ada@example.com" }))
      body.set(k, v);
    const response = await send(LOCAL_PUBLIC, "/api/auth/signin/idp", {
      method: "POST",
      headers: { origin: originOf(LOCAL_PUBLIC) },
      body,
      cookies: [form.nonceCookie],
    });
    expect(response.status).toBe(400);
    expectNoSession(response, LOCAL_PUBLIC);
  });
});

describe("Cancel", () => {
  const rows: [Mode, string, string][] = [
    [LOCAL_PUBLIC, "/", "/?auth_error=cancelled"],
    [LOCAL_PUBLIC, "/dash?tab=2#top", "/dash?tab=2&auth_error=cancelled#top"],
    [LOCAL_PRIVATE, "/dash", "/shop/dash?auth_error=cancelled"],
    [LOCAL_PRIVATE, "//evil.example", "/shop/?auth_error=cancelled"],
  ];
  it.each(rows)("%s, redirect %s → %s, no session", async (mode, redirect, location) => {
    const form = await openLocalForm(mode, redirect);
    const response = await postLocalForm(mode, {
      fields: { csrf: form.csrf, redirect: form.redirect, action: "cancel", email: "ada@example.com" },
      cookies: [form.nonceCookie],
    });
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe(location);
    expectNoSession(response, mode);
    expect(cookieNamed(response, sessionCookieName(mode))).toBeUndefined();
  });
});

describe("redirects accept same-origin paths only; anything else lands on <basePath>/", () => {
  const hostile = [
    "//evil.example",
    "/\\evil.example",
    "https://evil.example",
    "%2F%2Fevil.example",
    "/%2F%2Fevil.example",
    "javascript:alert(1)",
    "/%5Cevil.example",
    "/\t/evil.example",
    "/../other-project/",
    "/a/%2e%2e/%2e%2e/x",
    "/%0d%0aSet-Cookie:x=1",
    "evil.example",
    "",
  ];
  const modes: [string, Mode][] = [
    ["local public", LOCAL_PUBLIC],
    ["local private", LOCAL_PRIVATE],
  ];
  for (const [label, mode] of modes) {
    it.each(hostile)(`${label}: %j`, async (redirect) => {
      const form = await openLocalForm(mode, redirect);
      expect(form.redirect).toBe("/");
      // Tampering with the hidden field does not help either.
      const response = await postLocalForm(mode, {
        fields: { csrf: form.csrf, redirect, action: "login", email: "ada@example.com" },
        cookies: [form.nonceCookie],
      });
      expect(response.status).toBe(303);
      expect(response.headers.get("location")).toBe(mode === LOCAL_PRIVATE ? "/shop/" : "/");
    });
  }

  it("a private deployment's path that already carries /<slug> is taken without it, so the prefix appears once", async () => {
    const form = await openLocalForm(LOCAL_PRIVATE, "/shop/dash");
    expect(form.redirect).toBe("/dash");
  });
});

describe("mode-specific routes", () => {
  it("POST /api/auth/signin/idp is 404 when deployed (and with a login worker bound locally)", async () => {
    for (const mode of [DEPLOYED_PUBLIC, DEPLOYED_PRIVATE, { ...LOCAL_PUBLIC, loginUrl: "http://127.0.0.1:9000" }]) {
      const response = await send(mode, "/api/auth/signin/idp", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", origin: originOf(mode) },
        body: "action=login&email=ada%40example.com",
      });
      expect(response.status).toBe(404);
      expect(response.headers.getSetCookie()).toEqual([]);
    }
  });

  it("GET /api/auth/callback is 404 in the local dummy flow", async () => {
    const response = await send(LOCAL_PUBLIC, "/api/auth/callback?token=v1.x.y");
    expect(response.status).toBe(404);
  });

  it("other methods on the sign-in paths are 404", async () => {
    expect((await send(LOCAL_PUBLIC, "/api/auth/signin/idp", { method: "PUT" })).status).toBe(404);
    expect((await send(LOCAL_PUBLIC, "/api/auth/signout", { method: "DELETE" })).status).toBe(404);
  });
});
