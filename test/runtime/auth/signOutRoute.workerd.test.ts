import { beforeEach, describe, expect, it } from "vitest";
import { auth, readSessionUser } from "#src/runtime/auth/index.ts";
import { SESSION_RECHECK_MS, SessionCache } from "#src/runtime/auth/sessionCache.ts";
import { DEPLOYED_PRIVATE, DEPLOYED_PUBLIC, LOCAL_PRIVATE, LOCAL_PUBLIC } from "#test/support/workerd/index.ts";
import { cookieNamed, envOf, originOf, send, sessionCookieName, signIn } from "#test/support/workerd/index.ts";
import type { Mode } from "#test/support/workerd/index.ts";

beforeEach(() => auth.allow());

const MODES: [string, Mode][] = [
  ["local public", LOCAL_PUBLIC],
  ["local private", LOCAL_PRIVATE],
  ["deployed public", DEPLOYED_PUBLIC],
  ["deployed private", DEPLOYED_PRIVATE],
];

function home(mode: Mode): string {
  return mode.private ? "/shop/" : "/";
}

async function signOutOf(mode: Mode, session: string): Promise<void> {
  const response = await send(mode, "/api/auth/signout", {
    headers: { "sec-fetch-site": "same-origin" },
    cookies: [session],
  });
  expect(response.status).toBe(303);
}

async function whoami(mode: Mode, session: string): Promise<unknown> {
  return ((await (await send(mode, "/whoami", { cookies: [session] })).json()) as { user: unknown }).user;
}

/** What another isolate (its own session cache), at `nowMS`, reads from a deployed public project's cookie. */
function readAs(isolate: SessionCache, session: string, nowMS: number) {
  const request = new Request(originOf(DEPLOYED_PUBLIC) + "/", { headers: { cookie: session } });
  return readSessionUser(request, envOf(DEPLOYED_PUBLIC), nowMS, isolate);
}

describe("sign-out from the app itself: session cookie cleared (same name and Path, Max-Age=0), 303 to the app's home", () => {
  const sameOrigin: [string, (mode: Mode) => RequestInit][] = [
    ["GET, Sec-Fetch-Site: same-origin", () => ({ headers: { "sec-fetch-site": "same-origin" } })],
    ["GET, Sec-Fetch-Site: none (typed or bookmarked)", () => ({ headers: { "sec-fetch-site": "none" } })],
    [
      "GET, no Sec-Fetch-Site, Referer of this origin",
      (mode) => ({ headers: { referer: originOf(mode) + "/some/page" } }),
    ],
    ["GET, no Sec-Fetch-Site, Origin of this origin", (mode) => ({ headers: { origin: originOf(mode) } })],
    ["POST, Origin of this origin", (mode) => ({ method: "POST", headers: { origin: originOf(mode) } })],
  ];
  for (const [label, mode] of MODES) {
    it.each(sameOrigin)(`${label}: %s`, async (_name, init) => {
      const session = await signIn(mode);
      const response = await send(mode, "/api/auth/signout", { ...init(mode), cookies: [session] });
      expect(response.status).toBe(303);
      expect(response.headers.get("location")).toBe(home(mode));
      expect(response.headers.get("cache-control")).toBe("no-store");
      const cleared = cookieNamed(response, sessionCookieName(mode));
      expect(cleared).toMatchObject({
        value: "",
        attributes: { path: mode.private ? "/shop" : "/", "max-age": "0", httponly: "", samesite: "Lax" },
      });
      expect(cleared!.attributes.secure).toBe(mode.local ? undefined : "");
    });
  }
});

describe("cross-site sign-out does nothing", () => {
  const crossSite: [string, RequestInit][] = [
    ["GET, Sec-Fetch-Site: cross-site", { headers: { "sec-fetch-site": "cross-site" } }],
    ["GET, Sec-Fetch-Site: same-site (a sibling subdomain)", { headers: { "sec-fetch-site": "same-site" } }],
    [
      "GET, Sec-Fetch-Site cross-site despite a same-origin Referer",
      { headers: { "sec-fetch-site": "cross-site", referer: "https://shop.example.app/" } },
    ],
    ["GET, Referer of another site", { headers: { referer: "https://evil.example/page" } }],
    ["GET, no evidence at all", {}],
  ];
  it.each(crossSite)("%s → 403 page with a same-origin POST button, cookie untouched", async (_name, init) => {
    for (const [, mode] of MODES) {
      const session = await signIn(mode);
      const response = await send(mode, "/api/auth/signout", { ...init, cookies: [session] });
      expect(response.status).toBe(403);
      expect(response.headers.getSetCookie()).toEqual([]);
      const page = await response.text();
      expect(page).toContain(`<form method="post" action="${mode.private ? "/shop" : ""}/api/auth/signout">`);
      // Still signed in.
      const me = await send(mode, "/api/private/me", { cookies: [session] });
      expect(me.status).toBe(200);
    }
  });

  it.each([
    ["foreign Origin", { origin: "https://evil.example" }],
    ["Origin: null", { origin: "null" }],
    ["no Origin, Sec-Fetch-Site cross-site", { "sec-fetch-site": "cross-site" }],
  ] as const)("POST with %s → 403, cookie untouched", async (_name, headers) => {
    const session = await signIn(DEPLOYED_PUBLIC);
    const response = await send(DEPLOYED_PUBLIC, "/api/auth/signout", { method: "POST", headers, cookies: [session] });
    expect(response.status).toBe(403);
    expect(response.headers.getSetCookie()).toEqual([]);
  });
});

describe("after sign-out", () => {
  it("the browser (which dropped the cookie) is signed out: require() answers 401", async () => {
    const session = await signIn(DEPLOYED_PRIVATE);
    await send(DEPLOYED_PRIVATE, "/api/auth/signout", {
      headers: { "sec-fetch-site": "same-origin" },
      cookies: [session],
    });
    expect((await send(DEPLOYED_PRIVATE, "/api/private/me")).status).toBe(401);
  });

  it("a copy of the cookie taken before sign-out is refused at once in the isolate that signed out: require() answers 401", async () => {
    for (const mode of MODES.map(([, m]) => m)) {
      const session = await signIn(mode);
      expect((await send(mode, "/api/private/me", { cookies: [session] })).status).toBe(200);
      await signOutOf(mode, session);
      const replay = await send(mode, "/api/private/me", { cookies: [session] });
      expect(replay.status).toBe(401);
      expect(((await replay.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
      expect(await whoami(mode, session)).toBeNull();
    }
  });

  it("the copy is refused by any other isolate that had not seen the session, at once (it asks the platform)", async () => {
    const session = await signIn(DEPLOYED_PUBLIC);
    await signOutOf(DEPLOYED_PUBLIC, session);
    expect(await readAs(new SessionCache(), session, Date.now())).toBeNull();
  });

  it("an isolate that saw the session before sign-out refuses the copy within SESSION_RECHECK_MS (injected clock)", async () => {
    const t0 = Date.now();
    const session = await signIn(DEPLOYED_PUBLIC);
    const elsewhere = new SessionCache();
    expect(await readAs(elsewhere, session, t0)).toEqual({ email: "ada@example.com", name: "Ada Lovelace" });
    await signOutOf(DEPLOYED_PUBLIC, session);
    // The documented bound: its answer from t0 may stand until t0 + 30 s, no longer.
    expect(SESSION_RECHECK_MS).toBe(30_000);
    expect(await readAs(elsewhere, session, t0 + SESSION_RECHECK_MS - 1)).toEqual({
      email: "ada@example.com",
      name: "Ada Lovelace",
    });
    expect(await readAs(elsewhere, session, t0 + SESSION_RECHECK_MS)).toBeNull();
  });

  it("ends only the signed-out session: the same user's session in another browser stays signed in", async () => {
    const laptop = await signIn(DEPLOYED_PUBLIC);
    const phone = await signIn(DEPLOYED_PUBLIC);
    await signOutOf(DEPLOYED_PUBLIC, laptop);
    expect((await send(DEPLOYED_PUBLIC, "/api/private/me", { cookies: [laptop] })).status).toBe(401);
    expect((await send(DEPLOYED_PUBLIC, "/api/private/me", { cookies: [phone] })).status).toBe(200);
    expect(await readAs(new SessionCache(), phone, Date.now())).not.toBeNull();
  });

  it("when the platform cannot end the session: 503 with a button to try again, the cookie kept, still signed in", async () => {
    const session = await signIn(LOCAL_PUBLIC);
    const down = envOf(LOCAL_PUBLIC, {
      PLATFORM_API: { fetch: async () => new Response("down", { status: 503 }) } as unknown as Fetcher,
    });
    const response = await send(LOCAL_PUBLIC, "/api/auth/signout", {
      headers: { "sec-fetch-site": "same-origin" },
      cookies: [session],
      env: down,
    });
    expect(response.status).toBe(503);
    expect(response.headers.getSetCookie()).toEqual([]);
    const page = await response.text();
    expect(page).toContain("The platform could not end your session, so you are still signed in.");
    expect(page).toContain('<form method="post" action="/api/auth/signout">');
    expect((await send(LOCAL_PUBLIC, "/api/private/me", { cookies: [session] })).status).toBe(200);
    // Trying again once the platform answers signs out.
    await signOutOf(LOCAL_PUBLIC, session);
    expect((await send(LOCAL_PUBLIC, "/api/private/me", { cookies: [session] })).status).toBe(401);
  });

  it("a request with no session cookie signs out without asking the platform", async () => {
    const down = envOf(LOCAL_PUBLIC, {
      PLATFORM_API: { fetch: async () => new Response("down", { status: 503 }) } as unknown as Fetcher,
    });
    const response = await send(LOCAL_PUBLIC, "/api/auth/signout", {
      headers: { "sec-fetch-site": "same-origin" },
      env: down,
    });
    expect(response.status).toBe(303);
  });
});
