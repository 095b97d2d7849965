import { describe, expect, it } from "vitest";
import { cookieValue, cookieValues, serializeCookie, type CookieAttributes } from "#src/core/web/cookies.ts";

const root: CookieAttributes = { path: "/", maxAge: 60, sameSite: "Lax", secure: true };

describe("serializeCookie", () => {
  it.each<[string, string, CookieAttributes, string]>([
    ["a secure host cookie", "__Host-s", root, "__Host-s=v; Path=/; Max-Age=60; HttpOnly; SameSite=Lax; Secure"],
    [
      "a secure path cookie",
      "__Secure-s_app",
      { ...root, path: "/app" },
      "__Secure-s_app=v; Path=/app; Max-Age=60; HttpOnly; SameSite=Lax; Secure",
    ],
    ["a plain local cookie", "s", { ...root, secure: false }, "s=v; Path=/; Max-Age=60; HttpOnly; SameSite=Lax"],
    [
      "a cross-site binding cookie",
      "bind",
      { ...root, sameSite: "None" },
      "bind=v; Path=/; Max-Age=60; HttpOnly; SameSite=None; Secure",
    ],
  ])("writes %s", (_, name, attributes, expected) => {
    expect(serializeCookie(name, "v", attributes)).toBe(expected);
  });

  // What a browser drops without a word (RFC 6265bis §4.1.3 prefixes, §5.4.7 SameSite=None) is refused loudly.
  it.each<[string, string, string, CookieAttributes, string]>([
    ["__Secure- without Secure", "__Secure-s", "v", { ...root, secure: false }, "must be Secure"],
    ["__Host- without Secure", "__Host-s", "v", { ...root, secure: false }, "must be Secure"],
    ["__Host- on a path", "__Host-s", "v", { ...root, path: "/app" }, "must have Path=/, not /app"],
    ["a prefix in another case", "__HOST-s", "v", { ...root, path: "/app" }, "must have Path=/"],
    ["SameSite=None without Secure", "s", "v", { ...root, sameSite: "None", secure: false }, "SameSite=None"],
    ["a name with a separator", "a=b", "v", root, "not an RFC 6265 token"],
    ["an empty name", "", "v", root, "not an RFC 6265 token"],
    ["a value with a semicolon", "s", "v; Domain=evil.test", root, "cannot carry"],
    ["a value with a space", "s", "a b", root, "cannot carry"],
  ])("refuses %s", (_, name, value, attributes, message) => {
    expect(() => serializeCookie(name, value, attributes)).toThrow(message);
  });
});

describe("cookieValues", () => {
  const request = (cookie: string) => new Request("https://app.test/", { headers: { cookie } });

  it("reads every value of a name in header order and ignores pairs without =", () => {
    expect(cookieValues(request("a=1; junk; b=2; a=3"), "a")).toEqual(["1", "3"]);
    expect(cookieValue(request("b=2"), "a")).toBeNull();
  });
});
