import { describe, expect, it } from "vitest";
import { isRuntimePath, publicRequestHeaders } from "#src/dev/cli/up/runtimeInternalHeaders.ts";

describe("publicRequestHeaders: what platform up's public entry passes on", () => {
  it.each([
    ["MF-Route-Override", "platform-api"],
    ["mf-route-override", "fake-email"],
    ["MF-Original-URL", "http://127.0.0.1:1/admin"],
    ["MF-Original-Hostname", "evil"],
    ["MF-Disable-Pretty-Error", "true"],
    ["MF-CF-Blob", '{"country":"XX"}'],
    ["MF-Access-Blob", "{}"],
    ["MF-Op", "GET"],
    ["MF-Op-Secret", "guess"],
    ["MF-Proxy-Shared-Secret", "guess"],
    ["MF-Custom-Fetch-Service", "x"],
    ["MF-Sec-Fetch-Mode", "navigate"],
    ["CF-Connecting-IP", "203.0.113.9"],
    ["cf-ray", "1"],
    ["X-Forwarded-Proto", "https"],
  ])("drops %s", (name, value) => {
    const kept = publicRequestHeaders(["Host", "a.localhost:8800", name, value, "Accept", "*/*"], undefined);
    expect(kept).toEqual(["Host", "a.localhost:8800", "Accept", "*/*"]);
  });

  it("keeps every other header, repeated ones in order, and sets CF-Connecting-IP to the client's address", () => {
    const kept = publicRequestHeaders(
      ["Host", "h", "Cookie", "a=1", "X-Custom", "1", "X-Custom", "2", "CF-Connecting-IP", "1.2.3.4"],
      "::ffff:127.0.0.1",
    );
    expect(kept).toEqual([
      "Host",
      "h",
      "Cookie",
      "a=1",
      "X-Custom",
      "1",
      "X-Custom",
      "2",
      "CF-Connecting-IP",
      "127.0.0.1",
    ]);
    expect(publicRequestHeaders([], "::1")).toEqual(["CF-Connecting-IP", "::1"]);
  });
});

describe("isRuntimePath", () => {
  it.each([
    ["/cdn-cgi/local/scheduled", true],
    ["/cdn-cgi/local/platform-proxy", true],
    ["/cdn-cgi", true],
    ["/", false],
    ["/shop/cdn-cgi/x", false],
    ["/cdn-cgix", false],
  ])("%s → %s", (pathname, expected) => {
    expect(isRuntimePath(pathname)).toBe(expected);
  });
});
