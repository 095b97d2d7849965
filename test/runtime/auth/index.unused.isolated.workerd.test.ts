// A project that never uses `auth`: this file imports nothing from the auth
// module and runs in a workerd of its own (`*.isolated.workerd.test.ts`: the
// workers-isolated project), exactly like a bundle that esbuild built without it.
import { createExecutionContext } from "cloudflare:test";
import { Router, type RouterType } from "itty-router";
import { describe, expect, it } from "vitest";
import { createPlatformWorker } from "#src/runtime/entry/createPlatformWorker.ts";
import { platformRuntime } from "#src/runtime/entry/platformRuntime.ts";

const env = {
  PLATFORM_WORKER_SECRET: "ab".repeat(32),
  PLATFORM_PROJECT_ID: "7",
  PLATFORM_PROJECT_SLUG: "shop",
  PLATFORM_LOCAL: "1",
};

describe("a project that never uses auth has no sign-in routes", () => {
  const paths: [string, string][] = [
    ["GET", "/api/auth/signin/idp?redirect=/"],
    ["POST", "/api/auth/signin/idp"],
    ["GET", "/api/auth/callback?token=v1.a.b"],
    ["GET", "/api/auth/signout"],
  ];

  /** `method path` through the platform's entry in front of the user's `router`. */
  const call = (router: RouterType, method: string, path: string) =>
    createPlatformWorker(router).fetch!(
      new Request(`http://127.0.0.1:8787${path}`, { method }) as never,
      env,
      createExecutionContext(),
    );

  it.each(paths)("%s %s reaches the user's router", async (method, path) => {
    const router = Router();
    router.all("*", (request) => new Response(`user code: ${request.method} ${new URL(request.url).pathname}`));
    const response = await call(router, method, path);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(`user code: ${method} ${path.split("?")[0]}`);
    expect(response.headers.getSetCookie()).toEqual([]);
  });

  it.each(paths)("%s %s is the entry's 404 when the user's router has no such route", async (method, path) => {
    const router = Router();
    router.get("/", () => new Response("home"));
    const response = await call(router, method, path);
    expect(response.status).toBe(404);
    expect(response.headers.getSetCookie()).toEqual([]);
  });

  it("and reports no auth settings in its metadata", () => {
    expect(platformRuntime.metadata()).not.toHaveProperty("auth");
  });
});
