import { describe, expect, it } from "vitest";
import { asPlatformError, brandError, errorFromJSON, errorResponse, errorToJSON } from "#src/core/errors.ts";
import { isPlatformError, PlatformError, WIRE_ERROR_LIMITS } from "#src/core/errors.ts";

describe("PlatformError on the wire", () => {
  it("toJSON writes { code, message, details? } and fromJSON reads it back", () => {
    const error = new PlatformError("rate_limited", "Slow down", { retryAfterSeconds: 3 });
    expect(error.toJSON()).toEqual({ code: "rate_limited", message: "Slow down", details: { retryAfterSeconds: 3 } });
    expect(new PlatformError("not_found", "Gone").toJSON()).toEqual({ code: "not_found", message: "Gone" });
    const back = PlatformError.fromJSON(JSON.parse(JSON.stringify(error)));
    expect(back).toBeInstanceOf(PlatformError);
    expect(back.toJSON()).toEqual(error.toJSON());
  });

  it("an unknown or missing code becomes internal (or the caller's fallback); bad details are dropped", () => {
    expect(PlatformError.fromJSON({ code: "made_up", message: "m" }).code).toBe("internal");
    expect(PlatformError.fromJSON({ code: "toString", message: "m" }).code).toBe("internal");
    expect(PlatformError.fromJSON(null).toJSON()).toEqual({ code: "internal", message: "Internal error" });
    expect(PlatformError.fromJSON("text", { code: "upstream_error", message: "answered 500" }).toJSON()).toEqual({
      code: "upstream_error",
      message: "answered 500",
    });
    expect(PlatformError.fromJSON({ code: "conflict", message: "m", details: [1] }).details).toBeUndefined();
    expect(PlatformError.fromJSON({ code: "conflict", message: "m", details: {} }).details).toBeUndefined();
  });

  it("reads a PlatformError that crossed an actor RPC: a plain Error with its own properties, brand and cause", () => {
    // What workerd hands the caller: the class is gone, own properties (the brand too) and the cause are kept.
    const remote = Object.assign(new Error("Run is gone", { cause: new TypeError("no such row") }), {
      name: "PlatformError",
      code: "unknown_workflow",
      details: { runId: "r" },
    });
    brandError(remote, "PlatformError");
    const back = asPlatformError(remote);
    expect(back).toBeInstanceOf(PlatformError);
    expect(back?.toJSON()).toEqual({
      code: "unknown_workflow",
      message: "Run is gone",
      details: { runId: "r" },
      cause: { name: "TypeError", message: "no such row" },
    });
    expect(back?.cause).toBe(remote.cause);
  });

  it("knows a PlatformError by its brand, not its name: another copy's is one, a lookalike is not", () => {
    const lookalike = Object.assign(new Error("Gone"), { name: "PlatformError", code: "not_found" });
    expect(isPlatformError(lookalike)).toBe(false);
    expect(asPlatformError(lookalike)).toBeNull();
    const otherCopy = Object.assign(new Error("Gone"), { name: "PlatformError", code: "not_found" });
    brandError(otherCopy, "PlatformError");
    expect(isPlatformError(otherCopy)).toBe(true);
    expect(isPlatformError(new PlatformError("not_found", "Gone"))).toBe(true);
  });

  it("carries its cause: the standard property, and on the wire its chain without stacks, bounded", () => {
    const root = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    const error = new PlatformError("upstream_error", "The provider is down", undefined, {
      cause: new PlatformError("internal", "fetch failed", undefined, { cause: root }),
    });
    expect((error.cause as PlatformError).cause).toBe(root);
    const json = error.toJSON();
    expect(json).toEqual({
      code: "upstream_error",
      message: "The provider is down",
      cause: {
        name: "PlatformError",
        message: "fetch failed",
        code: "internal",
        cause: { name: "Error", message: "connect ECONNREFUSED", code: "ECONNREFUSED" },
      },
    });
    // Read back from JSON (an HTTP body), the cause is described: an Error with the same name, message and code.
    const back = PlatformError.fromJSON(JSON.parse(JSON.stringify(json)));
    expect(back.toJSON()).toEqual(json);
    expect(back.cause).toBeInstanceOf(Error);
    expect(back.cause).toMatchObject({ name: "PlatformError", message: "fetch failed", code: "internal" });
    const tooDeep = errorToJSON(
      new Error("0", {
        cause: new Error("1", { cause: new Error("2", { cause: new Error("3", { cause: new Error("4") }) }) }),
      }),
      WIRE_ERROR_LIMITS,
    );
    expect(JSON.stringify(tooDeep)).not.toContain('"4"');
    expect(tooDeep.cause?.cause?.cause?.message).toBe("3");
  });

  it("errorFromJSON describes an error: name, message, code, stack and causes", () => {
    const error = errorFromJSON({
      name: "TypeError",
      message: "x is not a function",
      code: "E1",
      stack: "TypeError: x is not a function\n    at step (src/index.ts:3:7)",
      cause: { name: "Error", message: "root" },
    });
    expect(error).toMatchObject({ name: "TypeError", message: "x is not a function", code: "E1" });
    expect(error.stack).toBe("TypeError: x is not a function\n    at step (src/index.ts:3:7)");
    expect(error.cause).toMatchObject({ name: "Error", message: "root" });
  });

  it("errorResponse answers with the same shape and the code's status", async () => {
    const response = errorResponse(new PlatformError("forbidden", "No", { why: "x" }));
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({ error: { code: "forbidden", message: "No", details: { why: "x" } } });
    expect(await errorResponse(new Error("secret")).json()).toEqual({
      error: { code: "internal", message: "Internal error" },
    });
    // Another copy of the class (the project's bundle under `platform dev --node`) answers as itself.
    const otherCopy = Object.assign(new Error("No such run"), { code: "not_found" });
    brandError(otherCopy, "PlatformError");
    const answer = errorResponse(otherCopy);
    expect(answer.status).toBe(404);
    expect(await answer.json()).toEqual({ error: { code: "not_found", message: "No such run" } });
  });
});
