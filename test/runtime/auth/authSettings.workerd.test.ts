import { describe, expect, it } from "vitest";
import { auth } from "#src/runtime/auth/index.ts";
import { DEFAULT_SESSION_SECONDS, MAX_SESSION_SECONDS } from "#src/contracts/signInSessions.ts";
import { authSettings } from "#src/runtime/auth/authSettings.ts";
import { checkEmail } from "#src/core/email.ts";
import { safeRedirectPath } from "#src/core/web/redirectPath.ts";
import { platformRuntime } from "#src/runtime/entry/platformRuntime.ts";
import { PlatformError } from "#src/core/errors.ts";

describe("auth.allow(options)", () => {
  it("defaults: every account, 30-day sessions; reported in the build metadata for the login worker", () => {
    auth.allow();
    expect(authSettings()).toEqual({ domains: null, sessionMaxAge: DEFAULT_SESSION_SECONDS });
    expect(DEFAULT_SESSION_SECONDS).toBe(2_592_000);
    expect(platformRuntime.metadata().auth).toEqual({ domains: null, sessionMaxAge: 2_592_000 });
  });

  it("normalises domains to lower case and drops duplicates", () => {
    auth.allow({ domains: ["Example.COM", "example.com", "corp.example.org"], sessionMaxAge: 3600 });
    expect(platformRuntime.metadata().auth).toEqual({
      domains: ["example.com", "corp.example.org"],
      sessionMaxAge: 3600,
    });
  });

  it("accepts sessionMaxAge from 1 s to 400 days", () => {
    auth.allow({ sessionMaxAge: 1 });
    expect(authSettings().sessionMaxAge).toBe(1);
    auth.allow({ sessionMaxAge: MAX_SESSION_SECONDS });
    expect(authSettings().sessionMaxAge).toBe(400 * 86_400);
  });

  const invalid: [string, unknown, RegExp][] = [
    ["sessionMaxAge 0", { sessionMaxAge: 0 }, /sessionMaxAge must be a whole number of seconds from 1 to 34560000/],
    ["sessionMaxAge negative", { sessionMaxAge: -5 }, /sessionMaxAge/],
    ["sessionMaxAge fractional", { sessionMaxAge: 1.5 }, /sessionMaxAge/],
    ["sessionMaxAge over 400 days", { sessionMaxAge: MAX_SESSION_SECONDS + 1 }, /400 days/],
    ["sessionMaxAge as a string", { sessionMaxAge: "3600" }, /got "3600"/],
    ["sessionMaxAge NaN", { sessionMaxAge: Number.NaN }, /sessionMaxAge/],
    ["sessionMaxAge Infinity", { sessionMaxAge: Number.POSITIVE_INFINITY }, /sessionMaxAge/],
    ["domains not an array", { domains: "example.com" }, /domains must be an array/],
    ["domains empty", { domains: [] }, /nobody could sign in/],
    ["a domain with @", { domains: ["@example.com"] }, /"@example.com" is not a bare domain/],
    ["an address", { domains: ["a@example.com"] }, /not a bare domain/],
    ["a URL", { domains: ["https://example.com"] }, /not a bare domain/],
    ["a wildcard", { domains: ["*.example.com"] }, /not a bare domain/],
    ["no dot", { domains: ["localhost"] }, /not a bare domain/],
    ["a port", { domains: ["example.com:443"] }, /not a bare domain/],
    ["whitespace", { domains: [" example.com"] }, /not a bare domain/],
    ["a trailing dot", { domains: ["example.com."] }, /not a bare domain/],
    ["non-ASCII", { domains: ["bücher.example"] }, /xn--/],
    ["a number", { domains: [42] }, /42 is not a bare domain/],
    ["an unknown option (typo)", { domain: ["example.com"] }, /no option "domain"/],
    ["not an object", "example.com", /takes an options object/],
  ];
  it.each(invalid)(
    "refuses %s with a clear invalid_input PlatformError, keeping the previous settings",
    (_label, options, message) => {
      auth.allow({ domains: ["kept.example"] });
      let thrown: unknown;
      try {
        auth.allow(options as never);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(PlatformError);
      expect((thrown as PlatformError).code).toBe("invalid_input");
      expect((thrown as PlatformError).message).toMatch(message);
      expect(authSettings().domains).toEqual(["kept.example"]);
    },
  );
});

describe("checkEmail (the domain rule)", () => {
  const domains = ["example.com"];
  const rows: [string, string][] = [
    ["a@example.com", "ok"],
    ["a@EXAMPLE.COM", "ok"],
    ["o'brien@example.com", "ok"],
    ["a@example.com.evil.io", "domain_not_allowed"],
    ["a@sub.example.com", "domain_not_allowed"],
    ["a@xexample.com", "domain_not_allowed"],
    ['"a@b"@example.com', "malformed"],
    ["a@b@example.com", "malformed"],
    ["a@example", "malformed"],
    ["a@-example.com", "malformed"],
    ["a..b@example.com", "malformed"],
    [".a@example.com", "malformed"],
    ["a@example.com\n", "malformed"],
    ["a@exam_ple.com", "malformed"],
    ["<a@example.com>", "malformed"],
    ["a@example.com,b@example.com", "malformed"],
  ];
  it.each(rows)("%j → %s", (email, outcome) => {
    const check = checkEmail(email, domains);
    expect(check.ok ? "ok" : check.reason).toBe(outcome);
  });
});

describe("safeRedirectPath", () => {
  const rows: [string, string, string | null][] = [
    ["/", "", "/"],
    ["/dash?tab=1#x", "", "/dash?tab=1#x"],
    ["/caf%C3%A9", "", "/caf%C3%A9"],
    ["/a%2Fb", "", "/a%2Fb"],
    ["//evil.example", "", null],
    ["/\\evil.example", "", null],
    ["\\\\evil.example", "", null],
    ["https://evil.example", "", null],
    ["http:/evil.example", "", null],
    ["%2F%2Fevil.example", "", null],
    ["/%2F%2Fevil.example", "", null],
    ["/%2f/evil.example", "", null],
    ["/%5C/evil.example", "", null],
    ["javascript:alert(1)", "", null],
    ["/\u0000x", "", null],
    ["/%00x", "", null],
    [" /x", "", null],
    ["/x y", "", null],
    ["/%E2%80%A8x", "", null],
    ["/orders?tab=open&q=a%20b", "", "/orders?tab=open&q=a%20b"],
    ["/a%09b", "", null],
    ["/a%0Ab", "", null],
    ["/%20/evil.example", "", "/%20/evil.example"],
    ["/..", "", null],
    ["/a/../../b", "", null],
    ["/a/%2e%2e/b", "", null],
    ["/%", "", null],
    ["/dash", "/shop", "/dash"],
    ["/shop", "/shop", "/"],
    ["/shop/dash?x=1", "/shop", "/dash?x=1"],
    ["/shopping", "/shop", "/shopping"],
    ["/../other/", "/shop", null],
    ["x".repeat(3000), "", null],
  ];
  it.each(rows)("%j under base path %j → %j", (raw, basePath, expected) => {
    expect(safeRedirectPath(raw, basePath)).toBe(expected);
  });
});
