import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { authenticateProjectCall } from "#src/plugins/kit/authenticateProjectCall.ts";
import { IDENTITY_HEADER } from "#src/core/requestToken.ts";
import { platformRejection, signedRequest, twoProjects } from "#test/support/workerd/index.ts";

describe("authenticateProjectCall", () => {
  it("accepts a token signed by the project for this method, path and body, and returns the raw body", async () => {
    const { a } = await twoProjects();
    const body = JSON.stringify({ hello: "world" });
    const { project, body: bytes } = await authenticateProjectCall(
      await signedRequest({ project: a, path: "/send", body }),
      env.DB,
    );
    expect(project.id).toBe(a.id);
    expect(new TextDecoder().decode(bytes)).toBe(body);
  });

  it.each([
    ["no header", { drop: true }, /Missing X-Platform-Identity/],
    ["a malformed token", { raw: "abc.def" }, /Malformed/],
    ["an expired token (65 s old)", { nowOffsetMs: -65_000 }, /expired/],
    ["a token from the future (65 s)", { nowOffsetMs: 65_000 }, /expired/],
    ["another project's id with this project's secret", { otherId: true }, /^Invalid X-Platform-Identity token\.$/],
    ["a forged secret", { secret: "f".repeat(64) }, /^Invalid X-Platform-Identity token\.$/],
    ["an unknown project id", { asProjectId: 999_999 }, /^Invalid X-Platform-Identity token\.$/],
    ["a signature over another path", { signedPath: "/other" }, /^Invalid X-Platform-Identity token\.$/],
    ["a signature over another body", { signedBody: "{}" }, /^Invalid X-Platform-Identity token\.$/],
  ] as const)("refuses %s with 401", async (_name, spec, message) => {
    const { a, b } = await twoProjects();
    const s = spec as Record<string, unknown>;
    let request = await signedRequest({
      project: a,
      path: "/send",
      body: '{"x":1}',
      // The signing clock is read here, not when the table is built: tests may run seconds later.
      nowMS: s.nowOffsetMs === undefined ? undefined : Date.now() + (s.nowOffsetMs as number),
      secret: s.secret as string | undefined,
      asProjectId: s.otherId ? b.id : (s.asProjectId as number | undefined),
      signedPath: s.signedPath as string | undefined,
      signedBody: s.signedBody as string | undefined,
    });
    if (s.drop || s.raw) {
      const headers = new Headers(request.headers);
      headers.delete(IDENTITY_HEADER);
      if (s.raw) headers.set(IDENTITY_HEADER, s.raw as string);
      request = new Request(request.url, { method: "POST", headers, body: '{"x":1}' });
    }
    const error = await platformRejection(authenticateProjectCall(request, env.DB));
    expect(error.code).toBe("unauthorized");
    expect(error.message).toMatch(message);
  });

  it("refuses an oversized body with 413 before looking at the token", async () => {
    const { a } = await twoProjects();
    const request = await signedRequest({ project: a, path: "/send", body: "x".repeat(70_000) });
    expect((await platformRejection(authenticateProjectCall(request, env.DB))).code).toBe("payload_too_large");
  });
});
