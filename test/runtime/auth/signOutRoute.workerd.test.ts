import { beforeEach, describe, expect, it } from "vitest";
import { auth } from "#src/runtime/auth/index.ts";
import {
  DEPLOYED_PRIVATE,
  DEPLOYED_PUBLIC,
  LOCAL_PRIVATE,
  LOCAL_PUBLIC,
  cookieNamed,
  originOf,
  send,
  sessionCookieName,
  signIn,
  type Mode,
} from "#test/support/workerd/index.ts";

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

  it("documented limit: sessions are stateless, so a copy of the cookie value taken before sign-out stays valid until it expires", async () => {
    const session = await signIn(DEPLOYED_PUBLIC);
    await send(DEPLOYED_PUBLIC, "/api/auth/signout", {
      headers: { "sec-fetch-site": "same-origin" },
      cookies: [session],
    });
    expect((await send(DEPLOYED_PUBLIC, "/api/private/me", { cookies: [session] })).status).toBe(200);
  });
});
