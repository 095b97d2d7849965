import { describe, expect, it } from "vitest";
import { PlatformError } from "#src/core/errors.ts";
import { pluginErrorResponse } from "#src/plugins/kit/pluginErrorResponse.ts";

describe("pluginErrorResponse", () => {
  it.each([
    [new PlatformError("rate_limited", "slow down", { retryAfterSeconds: 12.2 }), 429, "13"],
    [new PlatformError("unauthorized", "no"), 401, null],
    [new PlatformError("revoked", "reinstall"), 409, null],
    [new Error("boom"), 500, null],
  ] as const)("maps %s", async (error, status, retryAfter) => {
    const response = pluginErrorResponse(error);
    expect(response.status).toBe(status);
    expect(response.headers.get("retry-after")).toBe(retryAfter);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.message.length).toBeGreaterThan(0);
  });
});
