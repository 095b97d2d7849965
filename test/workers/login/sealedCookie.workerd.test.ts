import { describe, expect, it } from "vitest";
import { deriveKey } from "#src/core/crypto/keys.ts";
import { seal } from "#src/core/crypto/sealed.ts";
import {
  clearSealedCookie,
  openSealedCookie,
  type SealedCookieKind,
  sealCookie,
  sealedCookieName,
} from "#src/workers/login/sealedCookie.ts";

interface TestFlow {
  state: string;
  exp: number;
}

const KIND: SealedCookieKind<TestFlow> = {
  name: "test_flow",
  key: { info: "test-flow-cookie-v1", algorithm: "AES-GCM-256" },
  lifetimeSeconds: 600,
  isFlow: (value): value is Record<string, unknown> & TestFlow => typeof value.state === "string",
};
const OTHER_KIND: SealedCookieKind<TestFlow> = { ...KIND, name: "other_flow", key: { ...KIND.key, info: "other-v1" } };

const SECRET = "s".repeat(48);
const URL_HTTPS = "https://login.test";
const NOW_MS = 1_000_000_000_000;
const FLOW: TestFlow = { state: "abc", exp: NOW_MS / 1000 + 60 };

/** The cookie a browser sends back for a `Set-Cookie` line. */
function requestWith(setCookie: string): Request {
  return new Request(`${URL_HTTPS}/callback`, { headers: { cookie: setCookie.split(";")[0]! } });
}

/** A value sealed with this kind's key and name but holding `plain`: what a past (or buggy) version may have written. */
async function sealedPlain(plain: string): Promise<Request> {
  const name = sealedCookieName(KIND, URL_HTTPS);
  return new Request(`${URL_HTTPS}/callback`, {
    headers: { cookie: `${name}=${await seal(await deriveKey(SECRET, KIND.key), plain, name)}` },
  });
}

describe("sealed flow cookie", () => {
  it("names, seals and clears it with the login origin's attributes", async () => {
    expect(sealedCookieName(KIND, URL_HTTPS)).toBe("__Host-test_flow");
    expect(sealedCookieName(KIND, "http://127.0.0.1:8950")).toBe("test_flow");
    const set = await sealCookie(KIND, SECRET, URL_HTTPS, FLOW);
    expect(set).toMatch(/^__Host-test_flow=[^;]+;/);
    expect(set).toMatch(/Max-Age=600/);
    expect(set).toMatch(/HttpOnly/);
    expect(set).toMatch(/SameSite=Lax/);
    expect(set).toMatch(/Secure/);
    expect(clearSealedCookie(KIND, URL_HTTPS)).toMatch(/^__Host-test_flow=;.*Max-Age=0/);
  });

  it("opens what it sealed", async () => {
    const request = requestWith(await sealCookie(KIND, SECRET, URL_HTTPS, FLOW));
    expect(await openSealedCookie(KIND, request, { secret: SECRET, loginPublicUrl: URL_HTTPS }, NOW_MS)).toEqual({
      ok: true,
      flow: FLOW,
    });
  });

  const refused: [string, () => Promise<Request>, "missing" | "invalid" | "expired"][] = [
    ["no cookie", async () => new Request(`${URL_HTTPS}/callback`), "missing"],
    [
      "an oversized value",
      async () => new Request(URL_HTTPS, { headers: { cookie: `__Host-test_flow=${"a".repeat(5000)}` } }),
      "invalid",
    ],
    [
      "a forged value (another secret)",
      async () => requestWith(await sealCookie(KIND, "f".repeat(48), URL_HTTPS, FLOW)),
      "invalid",
    ],
    [
      "another kind's value under this name (replayed across flows)",
      async () => {
        const other = await sealCookie(OTHER_KIND, SECRET, URL_HTTPS, FLOW);
        return requestWith(other.replace("__Host-other_flow=", "__Host-test_flow="));
      },
      "invalid",
    ],
    [
      "a tampered value",
      async () => requestWith((await sealCookie(KIND, SECRET, URL_HTTPS, FLOW)).replace(/=(.)/, "=A$1")),
      "invalid",
    ],
    ["sealed text that is not JSON", () => sealedPlain("not json"), "invalid"],
    ["sealed JSON that is not an object", () => sealedPlain("null"), "invalid"],
    ["a flow without exp", () => sealedPlain(JSON.stringify({ state: "abc" })), "invalid"],
    ["a flow of the wrong shape", () => sealedPlain(JSON.stringify({ state: 1, exp: FLOW.exp })), "invalid"],
    ["an expired flow", () => sealedPlain(JSON.stringify({ ...FLOW, exp: NOW_MS / 1000 - 1 })), "expired"],
  ];
  it.each(refused)("refuses %s", async (_case, request, reason) => {
    expect(
      await openSealedCookie(KIND, await request(), { secret: SECRET, loginPublicUrl: URL_HTTPS }, NOW_MS),
    ).toEqual({ ok: false, reason });
  });
});
