import { describe, expect, it } from "vitest";
import { errorResponse, PlatformError } from "#src/core/errors.ts";

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

  it("reads an error that crossed RPC without its class", () => {
    const remote = Object.assign(new Error("Run is gone"), {
      name: "PlatformError",
      code: "unknown_workflow",
      details: { runId: "r" },
    });
    expect(PlatformError.fromJSON(remote).toJSON()).toEqual({
      code: "unknown_workflow",
      message: "Run is gone",
      details: { runId: "r" },
    });
  });

  it("errorResponse answers with the same shape and the code's status", async () => {
    const response = errorResponse(new PlatformError("forbidden", "No", { why: "x" }));
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({ error: { code: "forbidden", message: "No", details: { why: "x" } } });
    expect(await errorResponse(new Error("secret")).json()).toEqual({
      error: { code: "internal", message: "Internal error" },
    });
  });
});
