import { beforeEach, describe, expect, it } from "vitest";
import { auth } from "#src/runtime/auth/index.ts";
import { signInRequired } from "#src/runtime/auth/signInRequired.ts";
import {
  LOCAL_PUBLIC,
  MODES,
  basePathOf,
  openLocalForm,
  originOf,
  send,
  signIn,
  type Mode,
} from "#test/support/workerd/index.ts";

beforeEach(() => auth.allow());

const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

/** What `auth.require()` answers a request nobody is signed in for: a redirect for a page, 401 otherwise. */
const cases: [label: string, path: string, init: RequestInit, answer: "redirect" | 401][] = [
  ["GET, a browser's Accept (text/html first)", "/private", { headers: { accept: BROWSER_ACCEPT } }, "redirect"],
  ["GET, Accept: text/html alone", "/private", { headers: { accept: "text/html" } }, "redirect"],
  [
    "GET, Accept: TEXT/HTML; q=0.5 (case, parameters)",
    "/private",
    { headers: { accept: "TEXT/HTML; q=0.5" } },
    "redirect",
  ],
  ["HEAD, a browser's Accept", "/private", { method: "HEAD", headers: { accept: BROWSER_ACCEPT } }, "redirect"],
  ["GET, Accept: application/json", "/private", { headers: { accept: "application/json" } }, 401],
  ["GET, Accept: */* (fetch() from a page)", "/private", { headers: { accept: "*/*" } }, 401],
  ["GET, no Accept", "/private", {}, 401],
  ["GET, Accept: text/htmlx (not HTML)", "/private", { headers: { accept: "text/htmlx" } }, 401],
  ["POST, a browser's Accept (a form post)", "/private", { method: "POST", headers: { accept: BROWSER_ACCEPT } }, 401],
  ["PUT, Accept: text/html", "/private", { method: "PUT", headers: { accept: "text/html" } }, 401],
  [
    "GET, a browser's Accept, auth.require({ redirect: false })",
    "/no-redirect",
    { headers: { accept: BROWSER_ACCEPT } },
    401,
  ],
  ["GET, an API path, a browser's Accept", "/api/private/me", { headers: { accept: BROWSER_ACCEPT } }, "redirect"],
];

describe.each(MODES.map((m) => [m.name, m] as const))(
  "auth.require() with nobody signed in, %s",
  (_name, mode: Mode) => {
    it.each(cases)("%s", async (_label, path, init, answer) => {
      const response = await send(mode, `${path}?tab=2`, init);
      expect(response.headers.get("cache-control")).toBe("no-store");
      expect(response.headers.get("vary")).toBe("Accept");
      const signInPath = `${basePathOf(mode)}/api/auth/signin/idp?redirect=${encodeURIComponent(`${path}?tab=2`)}`;
      if (answer === "redirect") {
        expect(response.status).toBe(302);
        expect(response.headers.get("location")).toBe(signInPath);
        expect(await response.text()).toBe("");
      } else {
        expect(response.status).toBe(401);
        expect(await response.json()).toEqual({
          error: { code: "unauthorized", message: `Sign in required: ${originOf(mode)}${signInPath}` },
        });
      }
    });

    it("a signed-in navigation gets the page", async () => {
      const cookie = await signIn(mode);
      const response = await send(mode, "/private", { headers: { accept: BROWSER_ACCEPT }, cookies: [cookie] });
      expect(response.status).toBe(200);
      expect(await response.text()).toBe("private page");
    });
  },
);

describe("the redirect leads to sign-in and back", () => {
  it("GET /private as a browser → 302 to the sign-in form, which returns to /private", async () => {
    const response = await send(LOCAL_PUBLIC, "/private", { headers: { accept: BROWSER_ACCEPT } });
    const location = new URL(response.headers.get("location")!, originOf(LOCAL_PUBLIC));
    expect(location.searchParams.get("redirect")).toBe("/private");
    const form = await openLocalForm(LOCAL_PUBLIC, location.searchParams.get("redirect")!);
    expect(form.redirect).toBe("/private");
  });
});

describe("the redirect parameter is always a safe same-origin path", () => {
  // Paths a hostile link can make the protected route see; what comes back must stay on this origin.
  const hostile: [label: string, url: string, redirect: string][] = [
    ["a protocol-relative path", "http://127.0.0.1:8787//evil.example/x", "/"],
    ["an encoded protocol-relative path", "http://127.0.0.1:8787/%2F%2Fevil.example", "/"],
    ["a backslash (URL turns it into //)", "http://127.0.0.1:8787/\\evil.example", "/"],
    ["an encoded backslash", "http://127.0.0.1:8787/%5Cevil.example", "/"],
    ["an encoded newline", "http://127.0.0.1:8787/a%0d%0aSet-Cookie:x=1", "/"],
    ["an ordinary path and query", "http://127.0.0.1:8787/orders?id=7&x=a%20b", "/orders?id=7&x=a%20b"],
  ];
  it.each(hostile)("%s", (_label, url, redirect) => {
    const response = signInRequired(new Request(url, { headers: { accept: "text/html" } }));
    expect(response.status).toBe(302);
    const location = response.headers.get("location")!;
    expect(location.startsWith("/api/auth/signin/idp?redirect=")).toBe(true);
    expect(new URL(location, "http://127.0.0.1:8787").searchParams.get("redirect")).toBe(redirect);
  });
});
