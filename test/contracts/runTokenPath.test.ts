import { describe, expect, it } from "vitest";
import { isPublicPlatformPath } from "#src/contracts/publicPlatformPaths.ts";
import { parseRunCallbackRoutePath, runCallbackRoutePath } from "#src/contracts/runCallbackRoute.ts";
import { parseStreamRoutePath, streamRoutePath } from "#src/contracts/streamRoute.ts";

// Stream URLs and callback URLs share one path shape (runTokenPath.ts): each row holds for both.
describe.each([
  ["callback", "/__platform/callbacks/", runCallbackRoutePath, parseRunCallbackRoutePath],
  ["stream", "/__platform/streams/", streamRoutePath, parseStreamRoutePath],
])("the %s route's path", (_route, prefix, pathOf, parse) => {
  it("round-trips a run id that needs encoding and a token", () => {
    const path = pathOf("order/7 é", "k1.abc.def");
    expect(path).toBe(`${prefix}order%2F7%20%C3%A9/k1.abc.def`);
    expect(parse(path)).toEqual({ runId: "order/7 é", token: "k1.abc.def" });
  });

  it.each([
    ["a run and its token", "run-1/k1.a.b", true],
    ["a run without its token", "run-1", false],
    ["an empty run", "/k1.a.b", false],
    ["one segment deeper", "run-1/k1.a.b/more", false],
    ["climbing out", "../k1.a.b", false],
    ["climbing out after the run", "run-1/..", false],
  ])("%s is public: %s", (_case, tail, expected) => {
    expect(isPublicPlatformPath(prefix + tail)).toBe(expected);
    expect(parse(prefix + tail) !== null).toBe(expected);
  });

  it.each([
    ["a token with a character outside base64url and dots", "run-1/k1.a$b"],
    ["a run id that is not valid percent-encoding", "%E0%A4%A/k1.a.b"],
  ])("%s parses to null", (_case, tail) => {
    expect(parse(prefix + tail)).toBeNull();
  });
});

it.each([
  ["a webhook path", "/__platform/webhooks/stripe", true],
  ["another platform path", "/__platform/internal/run-1/k1.a.b", false],
])("%s is public: %s", (_case, path, expected) => {
  expect(isPublicPlatformPath(path)).toBe(expected);
});
