/**
 * Private deployments: an X-Platform-Base-Path header strips its prefix before user code, which
 * reads it back with basePathOf; any other header value changes nothing.
 */
import { Router } from "itty-router";
import { describe, expect, it } from "vitest";
import { basePathOf } from "#src/runtime/entry/requestBasePath.ts";
import { expectError } from "#test/support/workerd/index.ts";
import { createWorker, ORIGIN, recordingProject, run } from "./createPlatformWorker.fixture.ts";

describe("createPlatformWorker: private deployments (X-Platform-Base-Path)", () => {
  it.each([
    { header: null, url: "/hello", path: "/hello", basePath: "" },
    { header: "/priv", url: "/priv/hello", path: "/hello", basePath: "/priv" },
    { header: "/priv", url: "/priv/hello?x=1&y=2", path: "/hello?x=1&y=2", basePath: "/priv" },
    { header: "/priv", url: "/priv", path: "/", basePath: "/priv" },
    { header: "/priv", url: "/priv/", path: "/", basePath: "/priv" },
    { header: "/priv", url: "/priv/a/b/c", path: "/a/b/c", basePath: "/priv" },
    { header: "/priv", url: "/private/x", path: "/private/x", basePath: "" },
    { header: "/priv", url: "/other/hello", path: "/other/hello", basePath: "" },
    { header: "/priv", url: "/", path: "/", basePath: "" },
    { header: "priv", url: "/priv/hello", path: "/priv/hello", basePath: "" },
    { header: "/Priv", url: "/Priv/hello", path: "/Priv/hello", basePath: "" },
    { header: "/a/b", url: "/a/b/c", path: "/a/b/c", basePath: "" },
    { header: "/..", url: "/../x", path: "/x", basePath: "" },
    { header: "/priv/", url: "/priv/hello", path: "/priv/hello", basePath: "" },
    { header: "", url: "/hello", path: "/hello", basePath: "" },
  ])(
    "header $header, request $url → user code sees $path (base path '$basePath')",
    async ({ header, url, path, basePath }) => {
      const { worker, seen } = recordingProject();
      const headers: Record<string, string> = header === null ? {} : { "X-Platform-Base-Path": header };
      await run(worker, new Request(`${ORIGIN}${url}`, { headers }));
      expect(seen).toEqual([{ path, basePath, method: "GET", body: "" }]);
    },
  );

  it("a router route /hello answers /priv/hello and basePathOf gives /priv", async () => {
    const router = Router();
    router.get("/hello", (request) =>
      Response.json({ hello: true, basePath: basePathOf(request as unknown as Request) }),
    );
    const worker = createWorker(router);
    const response = await run(
      worker,
      new Request(`${ORIGIN}/priv/hello`, { headers: { "X-Platform-Base-Path": "/priv" } }),
    );
    expect(await response.json()).toEqual({ hello: true, basePath: "/priv" });
    const missing = await run(
      worker,
      new Request(`${ORIGIN}/priv/nope`, { headers: { "X-Platform-Base-Path": "/priv" } }),
    );
    const body = await expectError(missing, 404, "not_found");
    expect(body.error.message).toContain("/nope");
  });

  it("keeps method, headers and body when stripping the prefix", async () => {
    const { worker, seen } = recordingProject();
    await run(
      worker,
      new Request(`${ORIGIN}/priv/api/items`, {
        method: "POST",
        headers: { "X-Platform-Base-Path": "/priv", "content-type": "application/json" },
        body: JSON.stringify({ name: "widget" }),
      }),
    );
    expect(seen).toEqual([
      { path: "/api/items", basePath: "/priv", method: "POST", body: JSON.stringify({ name: "widget" }) },
    ]);
  });
});
