import { createExecutionContext } from "cloudflare:test";
import { Router, type IRequest } from "itty-router";
import { beforeAll, describe, expect, it } from "vitest";
import { createPlatformWorker, type ProjectExport } from "#src/runtime/entry/createPlatformWorker.ts";
import type { PlatformEnv } from "#src/runtime/entry/platformEnv.ts";
import { PlatformRuntime } from "#src/runtime/entry/platformRuntime.ts";
import { basePathOf } from "#src/runtime/entry/requestBasePath.ts";
import { PlatformError, type PlatformErrorCode } from "#src/core/errors.ts";
import { INTERNAL_HEADER, signRequestToken, type TokenPurpose } from "#src/core/requestToken.ts";
import { expectError, streamOfBytes } from "#test/support/workerd/index.ts";

const SECRET = "ab".repeat(32);
const OTHER_SECRET = "cd".repeat(32);
const PROJECT_ID = "7";
const ORIGIN = "https://shop.internal";

const projectEnv = (): PlatformEnv => ({
  PLATFORM_WORKER_SECRET: SECRET,
  PLATFORM_PROJECT_ID: PROJECT_ID,
  PLATFORM_PROJECT_SLUG: "shop",
});

// The test project's own runtime, so capabilities other test modules load register elsewhere.
const projectRuntime = new PlatformRuntime();
const createWorker = (project: ProjectExport) => createPlatformWorker(project, projectRuntime);

// What the test project's capabilities saw.
const cronRuns: { name: string; env: PlatformEnv }[] = [];
const pluginCalls: { method: string; rest: string; body: string; token: string | null }[] = [];

beforeAll(() => {
  // What capabilities do as user code loads: register into the worker's runtime.
  projectRuntime.registerCron({
    name: "nightly",
    schedule: "0 3 * * *",
    run: async (env) => {
      cronRuns.push({ name: "nightly", env });
      return "ran nightly";
    },
  });
  projectRuntime.registerCron({
    name: "__workflow-recovery",
    schedule: "* * * * *",
    run: async (env) => {
      cronRuns.push({ name: "__workflow-recovery", env });
      return "Re-enqueued 0 workflow(s)";
    },
  });
  projectRuntime.registerMetadata("email", () => ({ sender: "shop" }));
  projectRuntime.registerInternalRoute("__plugin", async (request, _env, _ctx, rest) => {
    pluginCalls.push({
      method: request.method,
      rest,
      body: await request.text(),
      token: request.headers.get(INTERNAL_HEADER),
    });
    return Response.json({ handled: rest });
  });
  projectRuntime.registerPublicRoute(async (request) =>
    new URL(request.url).pathname === "/api/auth/signout" ? new Response("signed out by the platform") : null,
  );
});

/** A project whose user code records whether it was reached. */
function recordingProject() {
  const seen: { path: string; basePath: string; method: string; body: string }[] = [];
  const router = Router<IRequest, [PlatformEnv, ExecutionContext]>();
  router.all("*", async (request) => {
    const r = request as unknown as Request;
    seen.push({
      path: new URL(r.url).pathname + new URL(r.url).search,
      basePath: basePathOf(r),
      method: r.method,
      body: await r.text(),
    });
    return new Response("user code");
  });
  return { worker: createWorker(router), seen };
}

async function run(
  worker: ExportedHandler<PlatformEnv>,
  request: Request,
  env: PlatformEnv = projectEnv(),
): Promise<Response> {
  return worker.fetch!(request as Request<unknown, IncomingRequestCfProperties>, env, createExecutionContext());
}

interface TokenSpec {
  purpose?: TokenPurpose;
  projectId?: string;
  secret?: string;
  method?: string;
  path?: string;
  body?: string | null;
  nowMs?: number;
}

function internalToken(method: string, path: string, body: string | null, spec: TokenSpec = {}): Promise<string> {
  return signRequestToken(
    spec.purpose ?? "internal",
    spec.projectId ?? PROJECT_ID,
    spec.secret ?? SECRET,
    {
      method: spec.method ?? method,
      pathAndQuery: spec.path ?? path,
      body: spec.body === undefined ? body : spec.body,
    },
    spec.nowMs,
  );
}

function internalRequest(
  method: string,
  path: string,
  token: string | null,
  body: string | null = null,
  headers: Record<string, string> = {},
) {
  const h = new Headers(headers);
  if (token !== null) h.set(INTERNAL_HEADER, token);
  return new Request(ORIGIN + path, { method, headers: h, body: body ?? undefined });
}

describe("createPlatformWorker: wrapping the default export", () => {
  it("wraps an itty-router Router", async () => {
    const router = Router();
    router.get("/hello", () => new Response("hello"));
    router.get("/items/:id", (request) => Response.json({ id: request.params.id }));
    const worker = createWorker(router);
    expect(await (await run(worker, new Request(`${ORIGIN}/hello`))).text()).toBe("hello");
    expect(await (await run(worker, new Request(`${ORIGIN}/items/42`))).json()).toEqual({ id: "42" });
  });

  it("wraps a plain { fetch } and passes env and ctx through", async () => {
    const seen: unknown[] = [];
    const worker = createWorker({
      fetch(request: Request, env: PlatformEnv, ctx: ExecutionContext) {
        seen.push(env, ctx);
        return new Response(`plain ${new URL(request.url).pathname}`);
      },
    });
    const env = projectEnv();
    const ctx = createExecutionContext();
    const response = await worker.fetch!(
      new Request(`${ORIGIN}/x`) as Request<unknown, IncomingRequestCfProperties>,
      env,
      ctx,
    );
    expect(await response.text()).toBe("plain /x");
    expect(seen[0]).toBe(env);
    expect(seen[1]).toBe(ctx);
  });

  it("wraps a class instance whose fetch lives on the prototype", async () => {
    class App {
      greeting = "hi";
      fetch() {
        return new Response(this.greeting);
      }
    }
    const worker = createWorker(new App() as unknown as ProjectExport);
    expect(await (await run(worker, new Request(`${ORIGIN}/`))).text()).toBe("hi");
  });

  it.each([
    { name: "undefined", value: undefined },
    { name: "null", value: null },
    { name: "an empty object", value: {} },
    { name: "fetch that is not a function", value: { fetch: "nope" } },
    { name: "a bare function", value: () => new Response("x") },
    { name: "only a scheduled handler", value: { scheduled() {} } },
  ])("rejects $name with a TypeError that says what to export", ({ value }) => {
    expect(() => createWorker(value as unknown as ProjectExport)).toThrow(TypeError);
    expect(() => createWorker(value as unknown as ProjectExport)).toThrow(/Router|fetch/);
  });

  it("passes scheduled/queue handlers through (bound to the project) and adds none that are missing", async () => {
    const calls: unknown[] = [];
    const project = {
      name: "proj",
      fetch: () => new Response("x"),
      scheduled(this: { name: string }, event: unknown, env: unknown) {
        calls.push(this.name, event, env);
      },
    };
    const worker = createWorker(project);
    expect(typeof worker.scheduled).toBe("function");
    expect(worker.queue).toBeUndefined();
    expect(worker.email).toBeUndefined();
    const env = projectEnv();
    const controller = { scheduledTime: 0, cron: "* * * * *", noRetry() {} } as ScheduledController;
    await worker.scheduled!(controller, env, createExecutionContext());
    expect(calls).toEqual(["proj", controller, env]);
  });

  it("hands its runtime each new env object once", async () => {
    const inits: unknown[] = [];
    const runtime = new PlatformRuntime();
    runtime.onEnv((env) => inits.push(env));
    const worker = createPlatformWorker({ fetch: () => new Response("x") }, runtime);
    const env1 = projectEnv();
    const env2 = projectEnv();
    await run(worker, new Request(`${ORIGIN}/`), env1);
    await run(worker, new Request(`${ORIGIN}/`), env1);
    await run(worker, new Request(`${ORIGIN}/`), env2);
    expect(inits).toEqual([env1, env2]);
    expect(runtime.env).toBe(env2);
    // A capability whose module loads after the first request gets the environment at once.
    const late: unknown[] = [];
    runtime.onEnv((env) => late.push(env));
    expect(late).toEqual([env2]);
  });

  it("lets platform public routes answer before user code and passes on otherwise", async () => {
    const { worker, seen } = recordingProject();
    expect(await (await run(worker, new Request(`${ORIGIN}/api/auth/signout`))).text()).toBe(
      "signed out by the platform",
    );
    expect(seen).toEqual([]);
    expect(await (await run(worker, new Request(`${ORIGIN}/api/other`))).text()).toBe("user code");
    expect(seen.map((s) => s.path)).toEqual(["/api/other"]);
  });
});

describe("createPlatformWorker: errors from user code", () => {
  it.each([
    { code: "invalid_input", status: 400 },
    { code: "unauthorized", status: 401 },
    { code: "forbidden", status: 403 },
    { code: "not_found", status: 404 },
    { code: "rate_limited", status: 429 },
    { code: "already_active", status: 409 },
  ] as { code: PlatformErrorCode; status: number }[])(
    "a thrown PlatformError($code) becomes a $status JSON error",
    async ({ code, status }) => {
      const router = Router();
      router.post("/orders", () => {
        throw new PlatformError(code, `Order rejected: ${code}.`);
      });
      const response = await run(createWorker(router), new Request(`${ORIGIN}/orders`, { method: "POST", body: "{}" }));
      const body = await expectError(response, status, code);
      expect(body.error.message).toBe(`Order rejected: ${code}.`);
    },
  );

  it.each([
    { name: "a router with no matching route", project: () => Router() },
    { name: "a fetch returning undefined", project: () => ({ fetch: () => undefined }) },
    { name: "a fetch returning a string", project: () => ({ fetch: () => "hello" }) },
    { name: "a fetch returning a plain object", project: () => ({ fetch: () => ({ status: 200 }) }) },
  ])("$name answers a JSON 404 naming the route", async ({ project }) => {
    const response = await run(
      createWorker(project() as ProjectExport),
      new Request(`${ORIGIN}/missing/page`, { method: "PUT", body: "x" }),
    );
    const body = await expectError(response, 404, "not_found");
    expect(body.error.message).toContain("PUT /missing/page");
  });

  it.each([
    {
      name: "a thrown Error",
      fetch: () => {
        throw new Error("database password is hunter2");
      },
    },
    { name: "a rejected promise", fetch: async () => Promise.reject(new Error("database password is hunter2")) },
    {
      name: "a thrown string",
      fetch: () => {
        throw "database password is hunter2";
      },
    },
    {
      name: "a TypeError from a bug",
      fetch: () => {
        const value = undefined as unknown as { hunter2: () => void };
        value.hunter2();
      },
    },
  ])("$name becomes a 500 that does not leak the message", async ({ fetch }) => {
    const response = await run(createWorker({ fetch }), new Request(`${ORIGIN}/boom`));
    const text = await response.clone().text();
    const body = await expectError(response, 500, "internal");
    expect(body.error.message).toBe("Internal error");
    expect(text).not.toContain("hunter2");
  });
});

describe("createPlatformWorker: the 500 under platform dev (PLATFORM_LOCAL and PLATFORM_DEV_STACK)", () => {
  const explode = () => {
    throw new Error("boom <b>hunter2</b>");
  };
  /** A stand-in for platform dev's Node mapper: answers the posted stack with its positions renamed. */
  const mapper = (answer: (stack: string) => Response | Promise<Response>) => ({
    posted: [] as string[],
    async fetch(this: { posted: string[] }, _url: string, init: RequestInit) {
      const stack = String(init.body);
      this.posted.push(stack);
      return answer(stack);
    },
  });
  const renaming = () => mapper((stack) => new Response(stack.replace(/\S+\.(js|ts):\d+:\d+/g, "src/index.ts:6:9")));
  const detailsOf = (body: { error: object }) =>
    (body.error as { details?: { message: string; stack: string } }).details;
  const html = { accept: "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8" };
  const json = { accept: "application/json" };

  it.each([
    { name: "PLATFORM_LOCAL and the binding, JSON", local: "1", binding: renaming, headers: json, shown: "json" },
    { name: "PLATFORM_LOCAL and the binding, navigation", local: "1", binding: renaming, headers: html, shown: "html" },
    {
      name: "PLATFORM_LOCAL and the binding, HEAD navigation",
      local: "1",
      binding: renaming,
      headers: html,
      method: "HEAD",
      shown: "html",
    },
    {
      name: "PLATFORM_LOCAL and the binding, POST asking for HTML",
      local: "1",
      binding: renaming,
      headers: html,
      method: "POST",
      shown: "json",
    },
    {
      name: "PLATFORM_LOCAL without the binding (a deployment served over http)",
      local: "1",
      binding: null,
      headers: html,
      shown: "nothing",
    },
    {
      name: "the binding without PLATFORM_LOCAL",
      local: undefined,
      binding: renaming,
      headers: html,
      shown: "nothing",
    },
    { name: "PLATFORM_LOCAL other than 1", local: "true", binding: renaming, headers: json, shown: "nothing" },
    {
      name: "a binding that is not a Fetcher",
      local: "1",
      binding: () => "http://dev-stack",
      headers: json,
      shown: "nothing",
    },
  ] as const)("$name → details: $shown", async ({ local, binding, headers, method, shown }) => {
    const env: PlatformEnv = { ...projectEnv(), PLATFORM_LOCAL: local, PLATFORM_DEV_STACK: binding?.() };
    const response = await run(
      createWorker({ fetch: explode }),
      new Request(`${ORIGIN}/boom`, { method: method ?? "GET", headers }),
      env,
    );
    expect(response.status).toBe(500);
    expect(response.headers.get("cache-control") ?? "").toBe(shown === "nothing" ? "" : "no-store");
    if (shown === "nothing") {
      const text = await response.clone().text();
      expect((await expectError(response, 500, "internal")).error).toEqual({
        code: "internal",
        message: "Internal error",
      });
      expect(text).not.toContain("hunter2");
    } else if (shown === "json") {
      const body = await expectError(response, 500, "internal");
      expect(body.error.message).toBe("Internal error");
      expect(detailsOf(body)).toEqual({
        message: "boom <b>hunter2</b>",
        stack: expect.stringContaining("src/index.ts:6:9"),
      });
      expect(String(detailsOf(body)?.stack)).toMatch(/^Error: boom <b>hunter2<\/b>/);
    } else {
      expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(response.headers.get("content-security-policy")).toContain("default-src 'none'");
      const page = await response.text();
      if (method === "HEAD") return expect(page).toBe("");
      expect(page).toContain("boom &lt;b&gt;hunter2&lt;/b&gt;");
      expect(page).toContain("src/index.ts:6:9");
      expect(page).not.toMatch(/<script|<b>/i);
    }
  });

  it.each([
    { name: "the mapper fails", answer: () => new Response("no map", { status: 500 }) },
    {
      name: "the mapper throws",
      answer: (): Response => {
        throw new Error("dev server gone");
      },
    },
  ])("falls back to the raw stack when $name", async ({ answer }) => {
    const binding = mapper(answer);
    const env: PlatformEnv = { ...projectEnv(), PLATFORM_LOCAL: "1", PLATFORM_DEV_STACK: binding };
    const response = await run(createWorker({ fetch: explode }), new Request(`${ORIGIN}/boom`, { headers: json }), env);
    const body = await expectError(response, 500, "internal");
    expect(detailsOf(body)).toEqual({ message: "boom <b>hunter2</b>", stack: binding.posted[0] });
    expect(binding.posted[0]).toMatch(/^Error: boom <b>hunter2<\/b>\n\s+at /);
  });

  it("a thrown non-Error shows its text as message and stack; a PlatformError keeps its own answer", async () => {
    const env: PlatformEnv = { ...projectEnv(), PLATFORM_LOCAL: "1", PLATFORM_DEV_STACK: renaming() };
    const thrown = await run(
      createWorker({
        fetch: () => {
          throw "plain string";
        },
      }),
      new Request(`${ORIGIN}/boom`),
      env,
    );
    expect(detailsOf(await expectError(thrown, 500, "internal"))).toEqual({
      message: "plain string",
      stack: "plain string",
    });
    const known = await run(
      createWorker({
        fetch: () => {
          throw new PlatformError("forbidden", "Not yours.");
        },
      }),
      new Request(`${ORIGIN}/boom`),
      env,
    );
    expect((await expectError(known, 403, "forbidden")).error).toEqual({ code: "forbidden", message: "Not yours." });
  });
});

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
        token: async (r) => internalToken(r.method, r.path, r.body, { nowMs: Date.now() - 120_000 }),
      },
      {
        name: "a token from the future (+90 s)",
        token: async (r) => internalToken(r.method, r.path, r.body, { nowMs: Date.now() + 90_000 }),
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
    const token = await internalToken("POST", "/__cron/nightly", null, { nowMs: Date.now() - 50_000 });
    for (let i = 0; i < 2; i++)
      expect((await run(worker, internalRequest("POST", "/__cron/nightly", token))).status).toBe(200);
    expect(cronRuns.map((r) => r.name)).toEqual(["nightly", "nightly"]);
    const stale = await internalToken("POST", "/__cron/nightly", null, { nowMs: Date.now() - 61_000 });
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
    const unknown = await run(
      worker,
      internalRequest("POST", "/__cron/nope", await internalToken("POST", "/__cron/nope", null)),
    );
    expect(denied.status).toBe(unknown.status);
    expect(await denied.json()).toEqual(await unknown.json());
  });

  it("GET /__platform/metadata returns the collected metadata with a valid token", async () => {
    const { worker, seen } = recordingProject();
    const response = await run(
      worker,
      internalRequest("GET", "/__platform/metadata", await internalToken("GET", "/__platform/metadata", null)),
    );
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

  it.each([
    { name: "nightly", output: "ran nightly" },
    { name: "__workflow-recovery", output: "Re-enqueued 0 workflow(s)" },
  ])("POST /__cron/$name runs that cron once with a valid token", async ({ name, output }) => {
    cronRuns.length = 0;
    const { worker, seen } = recordingProject();
    const env = projectEnv();
    const path = `/__cron/${name}`;
    const response = await run(worker, internalRequest("POST", path, await internalToken("POST", path, null)), env);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ cron: name, output });
    expect(cronRuns).toEqual([{ name, env }]);
    expect(seen).toEqual([]);
  });

  it.each([
    { method: "POST", path: "/__cron/unknown" },
    { method: "POST", path: "/__cron/" },
    { method: "POST", path: "/__cron" },
    { method: "GET", path: "/__cron/nightly" },
    { method: "POST", path: "/__platform/metadata" },
    { method: "GET", path: "/__platform/other" },
    { method: "POST", path: "/__workflow/run_1/execute" },
  ])("$method $path with a valid token → 404 (nothing registered there)", async ({ method, path }) => {
    cronRuns.length = 0;
    const { worker, seen } = recordingProject();
    const response = await run(worker, internalRequest(method, path, await internalToken(method, path, null)));
    await expectError(response, 404, "not_found");
    expect(cronRuns).toEqual([]);
    expect(seen).toEqual([]);
  });

  it("hands an authenticated /__plugin call, with its body, to the registered internal route", async () => {
    pluginCalls.length = 0;
    const { worker, seen } = recordingProject();
    const body = JSON.stringify({ command: "ping" });
    const path = "/__plugin/chatserver?x=1";
    const response = await run(worker, internalRequest("POST", path, await internalToken("POST", path, body), body));
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
    const okResponse = await run(
      worker,
      internalRequest("POST", "/__plugin/big", await internalToken("POST", "/__plugin/big", ok), ok),
    );
    expect(okResponse.status).toBe(200);
    const tooBig = ok + "x";
    const bigResponse = await run(
      worker,
      internalRequest("POST", "/__plugin/big", await internalToken("POST", "/__plugin/big", tooBig), tooBig),
    );
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
      internalRequest("POST", rootPath, await internalToken("POST", rootPath, null), null, {
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
      internalRequest("POST", prefixed, await internalToken("POST", prefixed, null), null, {
        "X-Platform-Base-Path": "/shop",
      }),
    );
    expect(cronRuns).toEqual([]);
    expect(seen.map((s) => s.path)).toEqual(["/__cron/nightly"]);
  });
});

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
