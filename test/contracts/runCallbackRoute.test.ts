import { describe, expect, it } from "vitest";
import { isPublicPlatformPath } from "#src/contracts/publicPlatformPaths.ts";
import { parseRunCallbackRoutePath, runCallbackRoutePath } from "#src/contracts/runCallbackRoute.ts";

describe("the callback route's path", () => {
  it("round-trips a run id that needs encoding and a token", () => {
    const path = runCallbackRoutePath("order/7 é", "k1.abc.def");
    expect(path).toBe("/__platform/callbacks/order%2F7%20%C3%A9/k1.abc.def");
    expect(parseRunCallbackRoutePath(path)).toEqual({ runId: "order/7 é", token: "k1.abc.def" });
  });

  it.each([
    ["a callback path", "/__platform/callbacks/run-1/k1.a.b", true],
    ["a stream path", "/__platform/streams/run-1/s1.a.b", true],
    ["a webhook path", "/__platform/webhooks/stripe", true],
    ["a callback path without its token", "/__platform/callbacks/run-1", false],
    ["a callback path one segment deeper", "/__platform/callbacks/run-1/k1.a.b/more", false],
    ["a callback path climbing out", "/__platform/callbacks/../k1.a.b", false],
    ["another platform path", "/__platform/internal/run-1/k1.a.b", false],
  ])("%s is public: %s", (_case, path, expected) => {
    expect(isPublicPlatformPath(path)).toBe(expected);
    if (path.startsWith("/__platform/callbacks/")) expect(parseRunCallbackRoutePath(path) !== null).toBe(expected);
  });

  it.each([
    ["a token with a character outside base64url and dots", "/__platform/callbacks/run-1/k1.a$b"],
    ["a run id that is not valid percent-encoding", "/__platform/callbacks/%E0%A4%A/k1.a.b"],
  ])("%s parses to null", (_case, path) => {
    expect(parseRunCallbackRoutePath(path)).toBeNull();
  });
});
