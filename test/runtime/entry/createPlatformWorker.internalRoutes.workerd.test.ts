/**
 * The internal routes (/__platform, /__cron, /__plugin, /__workflow) answer only the platform:
 * a request signed for exactly itself with this project's secret, within the token's lifetime.
 * Anything else is the same plain 404 as an unknown path, and nothing runs.
 */
import { describe, expect, it } from "vitest";
import { INTERNAL_HEADER } from "#src/core/requestToken.ts";
import { expectError, streamOfBytes } from "#test/support/workerd/index.ts";
import { CRONS, cronRuns, internalRequest, internalToken, ORIGIN } from "./createPlatformWorker.fixture.ts";
import { OTHER_SECRET, platformRequest, pluginCalls, PROJECT_ID, projectEnv } from "./createPlatformWorker.fixture.ts";
import { recordingProject, run, SECRET } from "./createPlatformWorker.fixture.ts";

describe("createPlatformWorker: internal routes answer only the platform", () => {
  const routes = [
    { method: "GET", path: "/__platform/metadata", body: null },
    { method: "POST", path: "/__cron/nightly", body: null },
    { method: "POST", path: "/__cron/__workflow-recovery", body: null },
    { method: "POST", path: "/__plugin/chatserver", body: JSON.stringify({ command: "ping" }) },
    { method: "POST", path: "/__workflow/run_1/execute", body: null },
  ] as const;

  type Route = (typeof routes)[number];
  const badTokens: { name: string; token: (r: Route) => Promise<string | null>; send?: (r: Route) => string | null }[] =
    [
      { name: "no token", token: async () => null },
      { name: "an empty token", token: async () => "" },
      { name: "a malformed token", token: async () => "not-a-token" },
      {
        name: "a forged signature",
        token: async () => `${PROJECT_ID}.${Math.floor(Date.now() / 1000)}.${"A".repeat(43)}`,
      },
      {
        name: "another project's token",
        token: async (r) => internalToken(r.method, r.path, r.body, { projectId: "8", secret: OTHER_SECRET }),
      },
      {
        name: "another project's secret under this id",
        token: async (r) => internalToken(r.method, r.path, r.body, { secret: OTHER_SECRET }),
      },
      {
        name: "this secret under another id",
        token: async (r) => internalToken(r.method, r.path, r.body, { projectId: "8" }),
      },
      {
        name: "a token for another path",
        token: async (r) => internalToken(r.method, r.path, r.body, { path: "/__cron/other" }),
      },
      {
        name: "a token for another method",
        token: async (r) => internalToken(r.method, r.path, r.body, { method: r.method === "GET" ? "POST" : "GET" }),
      },
      {
        name: "an expired token (2 min old)",
        token: async (r) => internalToken(r.method, r.path, r.body, { nowMS: Date.now() - 120_000 }),
      },
      {
        name: "a token from the future (+90 s)",
        token: async (r) => internalToken(r.method, r.path, r.body, { nowMS: Date.now() + 90_000 }),
      },
      {
        name: "an identity token (wrong purpose)",
        token: async (r) => internalToken(r.method, r.path, r.body, { purpose: "identity" }),
      },
      {
        name: "a body altered after signing",
        token: async (r) => internalToken(r.method, r.path, r.body, { body: "{}" }),
        send: (r) => (r.method === "GET" ? null : (r.body ?? "") + " "),
      },
    ];

  for (const route of routes) {
    it.each(badTokens)(`${route.method} ${route.path} with $name → 404 and nothing runs`, async ({ token, send }) => {
      cronRuns.length = 0;
      pluginCalls.length = 0;
      const { worker, seen } = recordingProject();
      const body = send ? send(route) : route.body;
      // For GET, "a body altered" degenerates to a token signed over another body.
      const response = await run(worker, internalRequest(route.method, route.path, await token(route), body));
      const error = await expectError(response, 404, "not_found");
      expect(error.error.message).toBe("Not found.");
      expect(cronRuns).toEqual([]);
      expect(pluginCalls).toEqual([]);
      expect(seen).toEqual([]);
    });
  }

  // docs/security.md: an internal token is accepted again while it is under 60 s old, refused after.
  it("accepts the same internal request again while its token is under 60 s old, and refuses it once older", async () => {
    cronRuns.length = 0;
    const { worker } = recordingProject();
    const token = await internalToken("POST", "/__cron/nightly", null, { nowMS: Date.now() - 50_000 });
    for (let i = 0; i < 2; i++)
      expect((await run(worker, internalRequest("POST", "/__cron/nightly", token))).status).toBe(200);
    expect(cronRuns.map((r) => r.name)).toEqual(["nightly", "nightly"]);
    const stale = await internalToken("POST", "/__cron/nightly", null, { nowMS: Date.now() - 61_000 });
    await expectError(await run(worker, internalRequest("POST", "/__cron/nightly", stale)), 404, "not_found");
    expect(cronRuns).toHaveLength(2);
  });

  it.each([
    { name: "no worker secret", env: { PLATFORM_PROJECT_ID: PROJECT_ID } },
    { name: "no project id", env: { PLATFORM_WORKER_SECRET: SECRET } },
    { name: "an empty secret", env: { PLATFORM_WORKER_SECRET: "", PLATFORM_PROJECT_ID: PROJECT_ID } },
  ])("answers 404 to every internal call when the worker has $name", async ({ env }) => {
    cronRuns.length = 0;
    const { worker } = recordingProject();
    const token = await internalToken("POST", "/__cron/nightly", null);
    const response = await run(worker, internalRequest("POST", "/__cron/nightly", token), env);
    await expectError(response, 404, "not_found");
    expect(cronRuns).toEqual([]);
  });

  it("an unauthenticated call is indistinguishable from an unknown internal path", async () => {
    const { worker } = recordingProject();
    const denied = await run(worker, internalRequest("POST", "/__cron/nightly", null));
    const unknown = await run(worker, await platformRequest("POST", "/__cron/nope"));
    expect(denied.status).toBe(unknown.status);
    expect(await denied.json()).toEqual(await unknown.json());
  });

  it("GET /__platform/metadata returns the collected metadata with a valid token", async () => {
    const { worker, seen } = recordingProject();
    const response = await run(worker, await platformRequest("GET", "/__platform/metadata"));
    expect(response.status).toBe(200);
    const metadata = (await response.json()) as { crons: { name: string; schedule: string }[]; email: unknown };
    expect(metadata.crons).toEqual(
      expect.arrayContaining([
        { name: "nightly", schedule: "0 3 * * *" },
        { name: "__workflow-recovery", schedule: "* * * * *" },
      ]),
    );
    expect(metadata.email).toEqual({ sender: "shop" });
    expect(JSON.stringify(metadata)).not.toContain("run");
    expect(seen).toEqual([]);
  });

  it.each(CRONS)("POST /__cron/$name runs that cron once with a valid token", async ({ name, output }) => {
    cronRuns.length = 0;
    const { worker, seen } = recordingProject();
    const env = projectEnv();
    const path = `/__cron/${name}`;
    const response = await run(worker, await platformRequest("POST", path), env);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ cron: name, output });
    expect(cronRuns).toEqual([{ name, env }]);
    expect(seen).toEqual([]);
  });

  it.each([
    "POST /__cron/unknown",
    "POST /__cron/",
    "POST /__cron",
    "GET /__cron/nightly",
    "POST /__platform/metadata",
    "GET /__platform/other",
    "POST /__workflow/run_1/execute",
  ])("%s with a valid token → 404 (nothing registered there)", async (route) => {
    const [method, path] = route.split(" ") as [string, string];
    cronRuns.length = 0;
    const { worker, seen } = recordingProject();
    const response = await run(worker, await platformRequest(method, path));
    await expectError(response, 404, "not_found");
    expect(cronRuns).toEqual([]);
    expect(seen).toEqual([]);
  });

  it("hands an authenticated /__plugin call, with its body, to the registered internal route", async () => {
    pluginCalls.length = 0;
    const { worker, seen } = recordingProject();
    const body = JSON.stringify({ command: "ping" });
    const path = "/__plugin/chatserver?x=1";
    const response = await run(worker, await platformRequest("POST", path, body));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ handled: "/chatserver" });
    expect(pluginCalls).toHaveLength(1);
    expect(pluginCalls[0]).toMatchObject({ method: "POST", rest: "/chatserver", body });
    expect(seen).toEqual([]);
  });

  it("accepts a body up to 1 MiB on internal routes and refuses more", async () => {
    pluginCalls.length = 0;
    const { worker } = recordingProject();
    const ok = "x".repeat(1024 * 1024);
    const okResponse = await run(worker, await platformRequest("POST", "/__plugin/big", ok));
    expect(okResponse.status).toBe(200);
    const tooBig = ok + "x";
    const bigResponse = await run(worker, await platformRequest("POST", "/__plugin/big", tooBig));
    expect(bigResponse.ok).toBe(false);
    expect(pluginCalls).toHaveLength(1);
  });

  it.each([
    { name: "no token", token: async () => null },
    {
      name: "a forged signature",
      token: async () => `${PROJECT_ID}.${Math.floor(Date.now() / 1000)}.${"A".repeat(43)}`,
    },
  ])(
    "answers an unauthenticated body over 1 MiB ($name) with the same 404 as any unauthenticated call, not 413",
    async ({ token }) => {
      pluginCalls.length = 0;
      const { worker, seen } = recordingProject();
      const tooBig = "x".repeat(1024 * 1024 + 1);
      const declared = await run(worker, internalRequest("POST", "/__plugin/big", await token(), tooBig));
      expect((await expectError(declared, 404, "not_found")).error.message).toBe("Not found.");
      // Streamed without Content-Length: refused while reading, with the same answer.
      const headers = new Headers();
      const value = await token();
      if (value !== null) headers.set(INTERNAL_HEADER, value);
      const streamed = await run(
        worker,
        new Request(`${ORIGIN}/__plugin/big`, { method: "POST", headers, body: streamOfBytes(1024 * 1024 + 1, 0x78) }),
      );
      expect((await expectError(streamed, 404, "not_found")).error.message).toBe("Not found.");
      expect(pluginCalls).toEqual([]);
      expect(seen).toEqual([]);
    },
  );

  it("an X-Platform-Base-Path header does not hide or create internal routes", async () => {
    cronRuns.length = 0;
    const { worker, seen } = recordingProject();
    // The platform calls internal routes at the root even for a private project.
    const rootPath = "/__cron/nightly";
    const root = await run(
      worker,
      await platformRequest("POST", rootPath, null, {
        "X-Platform-Base-Path": "/shop",
      }),
    );
    expect(root.status).toBe(200);
    expect(cronRuns).toHaveLength(1);
    // Under the prefix it is an ordinary user path: the cron does not run.
    cronRuns.length = 0;
    const prefixed = "/shop/__cron/nightly";
    await run(
      worker,
      await platformRequest("POST", prefixed, null, {
        "X-Platform-Base-Path": "/shop",
      }),
    );
    expect(cronRuns).toEqual([]);
    expect(seen.map((s) => s.path)).toEqual(["/__cron/nightly"]);
  });
});
