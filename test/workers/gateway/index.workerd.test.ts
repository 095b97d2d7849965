import { createExecutionContext, env } from "cloudflare:test";
import { Router, type IRequest } from "itty-router";
import { beforeEach, describe, expect, it } from "vitest";
import gateway, { type GatewayEnv } from "#src/workers/gateway/index.ts";
import { createPlatformWorker } from "#src/runtime/entry/createPlatformWorker.ts";
import { basePathOf } from "#src/runtime/entry/requestBasePath.ts";
import { INTERNAL_HEADER, signRequestToken } from "#src/core/requestToken.ts";
import type { ProjectRow } from "#src/workers/db/projectsTable.ts";
import {
  createProject,
  expectError,
  fakeDispatcher,
  projectRow,
  userWithProject,
  type FakeDispatcher,
  type ProjectWorkerHandler,
} from "#test/support/workerd/index.ts";

let shop: ProjectRow;
let priv: ProjectRow;

beforeEach(async () => {
  const { user, row } = await userWithProject("ada@example.com", "shop");
  await createProject(user.token, "priv", { private: true });
  shop = row;
  priv = await projectRow("priv");
});

function gatewayEnv(dispatcher: FakeDispatcher, extra: Partial<GatewayEnv> = {}): GatewayEnv {
  return { DB: env.DB, PLATFORM_DOMAIN: env.PLATFORM_DOMAIN, DISPATCHER: dispatcher.namespace, ...extra };
}

async function through(
  url: string,
  init: RequestInit = {},
  options: { handler?: ProjectWorkerHandler; extra?: Partial<GatewayEnv>; deployed?: string[] } = {},
) {
  const dispatcher = fakeDispatcher(options.handler, options.deployed ? { deployed: options.deployed } : {});
  const response = await gateway.fetch(
    new Request(url, init),
    gatewayEnv(dispatcher, options.extra),
    createExecutionContext(),
  );
  return { response, calls: dispatcher.calls, lookups: dispatcher.lookups };
}

describe("gateway routing to project workers", () => {
  it.each([
    { url: "https://shop.example.test/", script: "proj-shop", basePath: null },
    { url: "https://shop.example.test/a/b?q=1&r=two", script: "proj-shop", basePath: null },
    { url: "https://shop.example.test:8443/x", script: "proj-shop", basePath: null },
    {
      url: "https://SHOP.Example.TEST/caps",
      script: "proj-shop",
      basePath: null,
      forwarded: "https://shop.example.test/caps",
    },
    { url: "https://shop.example.test/__cronjob", script: "proj-shop", basePath: null },
    { url: "https://shop.example.test/api/__cron/x", script: "proj-shop", basePath: null },
    { url: "https://example.test/priv/api/x", script: "proj-priv", basePath: "/priv" },
    { url: "https://example.test/priv/api/x?q=1", script: "proj-priv", basePath: "/priv" },
    { url: "https://example.test/priv", script: "proj-priv", basePath: "/priv" },
    { url: "https://example.test/priv/", script: "proj-priv", basePath: "/priv" },
    { url: "https://example.test/priv/__cronjob", script: "proj-priv", basePath: "/priv" },
    // A webhook endpoint is public: third parties post to it.
    { url: "https://shop.example.test/__platform/webhooks/stripe-orders", script: "proj-shop", basePath: null },
    { url: "https://example.test/priv/__platform/webhooks/stripe-orders", script: "proj-priv", basePath: "/priv" },
    // A run's stream URL (workflow.streamURL): its token, not the caller, is checked by the project worker.
    { url: "https://shop.example.test/__platform/streams/run-1/s1.abc.def", script: "proj-shop", basePath: null },
    { url: "https://example.test/priv/__platform/streams/run-1/s1.abc.def", script: "proj-priv", basePath: "/priv" },
  ])("$url → $script (base path $basePath), URL forwarded unchanged", async ({ url, script, basePath, forwarded }) => {
    const { response, calls } = await through(url);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(`ok from ${script}`);
    expect(calls).toHaveLength(1);
    const call = calls[0]!;
    expect(call.scriptName).toBe(script);
    expect(call.request.url).toBe(forwarded ?? new URL(url).toString());
    expect(call.headers.get("X-Platform-Base-Path")).toBe(basePath);
  });

  it("forwards method, body and ordinary headers, and returns the project's response as is", async () => {
    const { response, calls } = await through(
      "https://example.test/priv/api/items",
      {
        method: "POST",
        body: JSON.stringify({ name: "widget" }),
        headers: { "content-type": "application/json", cookie: "session=abc", "x-custom": "keep" },
      },
      { handler: () => new Response("teapot", { status: 418, headers: { "x-from": "project" } }) },
    );
    expect(response.status).toBe(418);
    expect(response.headers.get("x-from")).toBe("project");
    expect(await response.text()).toBe("teapot");
    const call = calls[0]!;
    expect(call.method).toBe("POST");
    expect(call.body).toBe(JSON.stringify({ name: "widget" }));
    expect(call.headers.get("content-type")).toBe("application/json");
    expect(call.headers.get("cookie")).toBe("session=abc");
    expect(call.headers.get("x-custom")).toBe("keep");
  });

  it.each([
    { url: "https://example.test/shop/x?y=1", location: "https://shop.example.test/x?y=1" },
    { url: "https://example.test/shop", location: "https://shop.example.test/" },
    { url: "https://example.test/shop/", location: "https://shop.example.test/" },
    { url: "https://example.test:8443/shop/a/b", location: "https://shop.example.test:8443/a/b" },
  ])("redirects a public project reached by prefix ($url) to its subdomain with 308", async ({ url, location }) => {
    for (const method of ["GET", "POST"]) {
      const { response, calls } = await through(url, { method, body: method === "POST" ? "x" : undefined });
      expect(response.status).toBe(308);
      expect(response.headers.get("location")).toBe(location);
      expect(calls).toHaveLength(0);
    }
  });

  // What the 404 names, and the addresses that get it.
  const notFound: [named: string, urls: string[]][] = [
    // A private project reached by its subdomain: its prefix URL.
    ["https://example.test/priv/", ["https://priv.example.test/", "https://priv.example.test/api/x"]],
    ["https://example.test:8443/priv/", ["https://priv.example.test:8443/x"]],
    // No project of that slug: the slug.
    [
      '"nope"',
      [
        "https://nope.example.test/",
        "https://nope.example.test/a/b",
        "https://example.test/nope/",
        "https://example.test/nope/x?y=1",
      ],
    ],
    ['"api"', ["https://api.example.test/"]],
  ];
  it.each(notFound.flatMap(([named, urls]) => urls.map((url) => ({ url, named }))))(
    "answers $url with 404 naming $named; nothing reaches a project",
    async ({ url, named }) => {
      const { response, calls } = await through(url);
      const body = await expectError(response, 404, "not_found");
      expect(body.error.message).toContain(named);
      expect(calls).toHaveLength(0);
    },
  );

  it.each([
    "https://example.test/",
    "https://example.test/ab/x",
    "https://example.test/Shop/x",
    "https://a.b.example.test/",
    "https://ab.example.test/",
    "https://shop-.example.test/",
    "https://other.test/",
    "https://example.test.evil.test/shop/",
    "https://evilexample.test/",
    "http://127.0.0.1:8787/",
  ])("answers %s (no project) with 404 and calls no worker", async (url) => {
    const { response, calls, lookups } = await through(url);
    await expectError(response, 404, "not_found");
    expect(calls).toHaveLength(0);
    expect(lookups).toHaveLength(0);
  });

  it("answers 502 when the project exists but its worker is not deployed", async () => {
    const { response, calls } = await through("https://shop.example.test/", {}, { deployed: ["proj-priv"] });
    const body = await expectError(response, 502, "upstream_error");
    expect(body.error.message).toContain("shop");
    expect(calls).toHaveLength(0);
  });
});

describe("gateway blocks internal routes", () => {
  const INTERNAL_PATHS = [
    "/__plugin/x",
    "/__plugin/chatserver",
    "/__plugin",
    "/__workflow/r/execute",
    "/__workflow",
    "/__cron/c",
    "/__cron/__workflow-recovery",
    "/__cron",
    "/__platform/metadata",
    "/__platform",
    "/%5F%5Fcron/x",
    "/%5f%5fcron/x",
    "/__%63ron/x",
    "/%5F%5Fworkflow/r/execute",
    "/%5F%5Fplatform/metadata",
    "/%5F%5Fplugin/x",
    "/__cron/c?x=1",
    "/x/../__cron/c",
    "/x/%2e%2e/__cron/c",
    "/__platform/webhooks",
    "/__platform/webhooks/",
    "/__platform/webhooks/Stripe",
    "/__platform/webhooks/x/y",
    "/__platform/webhooks/x%2F..%2F..%2Fmetadata",
    "/__platform/webhooks/x/../../metadata",
    "/__platform/streams",
    "/__platform/streams/run-1",
    "/__platform/streams/run-1/token/more",
    "/__platform/streams/x%2F..%2F..%2Fmetadata/t",
    "/__platform/streams/%2e%2e/metadata",
  ];

  const hosts = [
    { via: "subdomain", base: "https://shop.example.test", extra: {} },
    { via: "private prefix", base: "https://example.test/priv", extra: {} },
    { via: "public prefix", base: "https://example.test/shop", extra: {} },
    { via: "default project", base: "http://127.0.0.1:8787", extra: { DEFAULT_PROJECT: "shop" } },
  ];

  for (const { via, base, extra } of hosts) {
    it.each(INTERNAL_PATHS)(`${via}: %s → 404 and the project worker is never called`, async (path) => {
      for (const method of ["GET", "POST"]) {
        const { response, calls, lookups } = await through(
          base + path,
          { method, body: method === "POST" ? "{}" : undefined },
          { extra },
        );
        const body = await expectError(response, 404, "not_found");
        expect(body.error.message).toBe("Not found.");
        expect(calls).toHaveLength(0);
        expect(lookups).toHaveLength(0);
      }
    });
  }

  it("blocks even with a valid internal token supplied by the client", async () => {
    const path = "/__cron/hourly";
    const token = await signRequestToken(
      "internal",
      { method: "POST", pathAndQuery: path, body: null },
      { projectId: shop.id, secret: shop.worker_secret },
    );
    const { response, calls } = await through(`https://shop.example.test${path}`, {
      method: "POST",
      headers: { [INTERNAL_HEADER]: token },
    });
    await expectError(response, 404, "not_found");
    expect(calls).toHaveLength(0);
  });
});

describe("gateway strips platform headers supplied by clients", () => {
  const clientHeaders = {
    "X-Platform-Base-Path": "/evil",
    "X-Platform-Internal": "1.1700000000.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
    "X-Platform-Identity": "1.1700000000.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
    "x-platform-local": "1",
    "x-keep-me": "yes",
  };

  it.each([
    { url: "https://shop.example.test/a", basePath: null, extra: {} },
    { url: "https://example.test/priv/a", basePath: "/priv", extra: {} },
    { url: "http://127.0.0.1:8787/a", basePath: null, extra: { DEFAULT_PROJECT: "shop" } },
  ])("$url: only the gateway's own base path reaches the worker", async ({ url, basePath, extra }) => {
    const { calls } = await through(url, { headers: clientHeaders }, { extra });
    expect(calls).toHaveLength(1);
    const headers = calls[0]!.headers;
    expect(headers.get("x-platform-base-path")).toBe(basePath);
    expect(headers.get("x-platform-internal")).toBeNull();
    expect(headers.get("x-platform-identity")).toBeNull();
    expect(headers.get("x-platform-local")).toBeNull();
    expect([...headers.keys()].filter((k) => k.startsWith("x-platform-") && k !== "x-platform-base-path")).toEqual([]);
    expect(headers.get("x-keep-me")).toBe("yes");
  });
});

describe("gateway keeps a private project's service worker inside its prefix", () => {
  // The attack: project B answers its service worker script with `Service-Worker-Allowed: /`, so a
  // worker registered from /B/ could take scope / on the shared origin and read what the browser
  // sends to project A (its pages, its sign-in callback POST).
  const serviceWorkerScript: ProjectWorkerHandler = () =>
    new Response("self.addEventListener('fetch', () => {});", {
      headers: { "content-type": "text/javascript", "Service-Worker-Allowed": "/", "x-keep-me": "yes" },
    });

  it.each([
    { via: "a private project (shared origin)", url: "https://example.test/priv/sw.js", allowed: null },
    { via: "a public project (its own origin)", url: "https://shop.example.test/sw.js", allowed: "/" },
  ])("$via: Service-Worker-Allowed → $allowed", async ({ url, allowed }) => {
    const { response } = await through(
      url,
      { headers: { "Service-Worker": "script" } },
      { handler: serviceWorkerScript },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("service-worker-allowed")).toBe(allowed);
    expect(response.headers.get("x-keep-me")).toBe("yes");
    expect(await response.text()).toContain("addEventListener");
  });
});

describe("gateway with DEFAULT_PROJECT (local development)", () => {
  it.each([
    { url: "http://127.0.0.1:8787/", script: "proj-shop", basePath: null, defaultProject: "shop" },
    { url: "http://localhost:8787/a?b=1", script: "proj-shop", basePath: null, defaultProject: "shop" },
    { url: "http://127.0.0.1:8787/x", script: "proj-priv", basePath: null, defaultProject: "priv" },
    // The platform domain keeps routing normally.
    { url: "https://example.test/priv/x", script: "proj-priv", basePath: "/priv", defaultProject: "shop" },
    // On the bare platform host, a first segment that is no private project is a path of the default project.
    { url: "https://example.test/runs/x", script: "proj-shop", basePath: null, defaultProject: "shop" },
    { url: "https://example.test/shop/x", script: "proj-shop", basePath: null, defaultProject: "shop" },
    { url: "https://shop.example.test/x", script: "proj-shop", basePath: null, defaultProject: "priv" },
  ])("$url with DEFAULT_PROJECT=$defaultProject → $script", async ({ url, script, basePath, defaultProject }) => {
    const { response, calls } = await through(url, {}, { extra: { DEFAULT_PROJECT: defaultProject } });
    expect(response.status).toBe(200);
    expect(calls.map((c) => c.scriptName)).toEqual([script]);
    expect(calls[0]!.request.url).toBe(new URL(url).toString());
    expect(calls[0]!.headers.get("x-platform-base-path")).toBe(basePath);
  });

  it("answers 404 naming the slug when the default project does not exist", async () => {
    const { response, calls } = await through("http://127.0.0.1:8787/", {}, { extra: { DEFAULT_PROJECT: "missing" } });
    const body = await expectError(response, 404, "not_found");
    expect(body.error.message).toContain("missing");
    expect(calls).toHaveLength(0);
  });
});

describe("gateway → real entry wrapper", () => {
  function realProjectWorker(row: ProjectRow) {
    const router = Router<IRequest, [unknown, ExecutionContext]>();
    router.get("/hello", (request) =>
      Response.json({ path: new URL(request.url).pathname, basePath: basePathOf(request as unknown as Request) }),
    );
    const worker = createPlatformWorker(router);
    const projectEnv = { PLATFORM_WORKER_SECRET: row.worker_secret, PLATFORM_PROJECT_ID: String(row.id) };
    return (request: Request) =>
      worker.fetch!(request as Request<unknown, IncomingRequestCfProperties>, projectEnv, createExecutionContext());
  }

  it("a private project's routes answer under /<slug> and know their base path", async () => {
    const { response } = await through(
      "https://example.test/priv/hello",
      {},
      { handler: (request) => realProjectWorker(priv)(request) },
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ path: "/hello", basePath: "/priv" });
  });

  it("a public project answers the same route at its subdomain root", async () => {
    const { response } = await through(
      "https://shop.example.test/hello",
      {},
      { handler: (request) => realProjectWorker(shop)(request) },
    );
    expect(await response.json()).toEqual({ path: "/hello", basePath: "" });
  });

  it("a client cannot make a public project strip a prefix by sending X-Platform-Base-Path", async () => {
    const { response } = await through(
      "https://shop.example.test/shop/hello",
      { headers: { "X-Platform-Base-Path": "/shop" } },
      { handler: (request) => realProjectWorker(shop)(request) },
    );
    await expectError(response, 404, "not_found");
  });
});
