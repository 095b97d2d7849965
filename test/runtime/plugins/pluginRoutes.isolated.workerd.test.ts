import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { createPlatformWorker } from "#src/runtime/entry/createPlatformWorker.ts";
import type { PlatformEnv } from "#src/runtime/entry/platformEnv.ts";
import { PLUGINS } from "#src/contracts/pluginRegistry.ts";
import { pluginCall } from "#src/runtime/plugins/pluginCall.ts";
import { NoPluginHandler } from "#src/runtime/plugins/noPluginHandler.ts";
import { platformRuntime } from "#src/runtime/entry/platformRuntime.ts";
import {
  installPluginHandler,
  registerPluginMetadata,
  type PluginRequestContext,
} from "#src/runtime/plugins/pluginRoutes.ts";
import { callProjectWorker } from "#src/workers/dispatch/callProjectWorker.ts";
import { PlatformError } from "#src/core/errors.ts";
import { IDENTITY_HEADER, verifyRequestToken } from "#src/core/requestToken.ts";

const SECRET = "ab".repeat(32);
const project = { id: 7, slug: "shop", script_name: "proj-shop", worker_secret: SECRET };
const projectEnv: PlatformEnv = {
  PLATFORM_WORKER_SECRET: SECRET,
  PLATFORM_PROJECT_ID: "7",
  PLATFORM_PROJECT_SLUG: "shop",
};

// The handlers and metadata replace the real chat-server and workspace modules' for the whole module graph, so
// this file runs in a workerd of its own (`*.isolated.workerd.test.ts`: the workers-isolated project).
const seen: PluginRequestContext["body"][] = [];
installPluginHandler(platformRuntime, "chatserver", ({ body }) => {
  seen.push(body);
  if ((body as { fail?: boolean }).fail) throw new PlatformError("invalid_input", "handler refused");
  return { type: 4, data: { content: "pong" } };
});
installPluginHandler(platformRuntime, "workspace", () => new Response("raw", { status: 202 }));
registerPluginMetadata("chatserver", () => ({ commands: [{ name: "ping" }], events: ["message"] }));

const worker = createPlatformWorker({ fetch: () => new Response("user code") });
const dispatcher = {
  get: () =>
    ({
      fetch: (input: RequestInfo | URL, init?: RequestInit) =>
        worker.fetch!(new Request(input, init) as never, projectEnv, createExecutionContext()),
    }) as unknown as Fetcher,
};

describe("/__plugin/<pluginId> in a project worker", () => {
  it("hands a platform delivery to the handler the plugin module registered", async () => {
    const response = await callProjectWorker(dispatcher, project, {
      method: "POST",
      pathAndQuery: "/__plugin/chatserver",
      body: JSON.stringify({ kind: "command", name: "ping" }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ type: 4, data: { content: "pong" } });
    expect(seen.at(-1)).toEqual({ kind: "command", name: "ping" });
    const raw = await callProjectWorker(dispatcher, project, {
      method: "POST",
      pathAndQuery: "/__plugin/workspace",
      body: "{}",
    });
    expect(raw.status).toBe(202);
  });

  it.each([
    ["an unregistered plugin", "/__plugin/email-send", "{}", 404, "not_found"],
    ["a nested path", "/__plugin/chatserver/x", "{}", 404, "not_found"],
    ["a body that is not JSON", "/__plugin/chatserver", "nope", 400, "malformed_json"],
    ["a handler's refusal", "/__plugin/chatserver", '{"fail":true}', 400, "invalid_input"],
  ] as const)("answers %s with its error", async (_name, path, body, status, code) => {
    const response = await callProjectWorker(dispatcher, project, { method: "POST", pathAndQuery: path, body });
    expect(response.status).toBe(status);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(code);
  });

  it("is a 404 for external callers (no internal token), and the handler never runs", async () => {
    const before = seen.length;
    const response = await worker.fetch!(
      new Request("https://shop.example.test/__plugin/chatserver", { method: "POST", body: "{}" }) as never,
      projectEnv,
      createExecutionContext(),
    );
    expect(response.status).toBe(404);
    expect(seen.length).toBe(before);
  });

  it("reports what the plugin modules registered under metadata `plugins`", async () => {
    const response = await callProjectWorker(dispatcher, project, {
      method: "GET",
      pathAndQuery: "/__platform/metadata",
    });
    expect(((await response.json()) as { plugins: unknown }).plugins).toEqual({
      chatserver: { commands: [{ name: "ping" }], events: ["message"] },
    });
  });
});

describe("/__plugin/<pluginId>: what a delivery came to (the answer, and under platform dev its record)", () => {
  installPluginHandler(platformRuntime, "outcomes", ({ body }) => {
    const { how } = body as { how: string };
    if (how === "none") return { handled: 0 };
    if (how === "unknown-command")
      throw new NoPluginHandler("This project has no handler for command /nope.", ["/deploy"]);
    if (how === "refused") throw new PlatformError("rate_limited", "Too many actions.");
    if (how === "crashed") throw new TypeError("x is not a function");
    return { handled: 2 };
  });
  const localEnv: PlatformEnv = { ...projectEnv, PLATFORM_LOCAL: "1" };
  const dispatcherFor = (env: PlatformEnv) => ({
    get: () =>
      ({
        fetch: (input: RequestInfo | URL, init?: RequestInit) =>
          worker.fetch!(new Request(input, init) as never, env, createExecutionContext()),
      }) as unknown as Fetcher,
  });
  const local = dispatcherFor(localEnv);
  const recorded = async () =>
    (
      (await (
        await callProjectWorker(local, project, { method: "GET", pathAndQuery: "/__plugin/outcomes" })
      ).json()) as { outcomes: any[] }
    ).outcomes;

  it.each([
    ["handlers ran", "ran", 200, { handled: 2 }, { result: "handled", handlers: 2 }],
    [
      "no handler took an event",
      "none",
      200,
      { handled: 0 },
      { result: "no_handler", message: "No outcomes handler took this event." },
    ],
    [
      "no handler for a command",
      "unknown-command",
      404,
      { error: { code: "not_found", message: "This project has no handler for command /nope." }, handled: 0 },
      { result: "no_handler", message: "This project has no handler for command /nope." },
    ],
    [
      "the handler refused",
      "refused",
      429,
      { error: { code: "rate_limited", message: "Too many actions." } },
      { result: "failed", error: { code: "rate_limited", message: "Too many actions.", stack: expect.any(String) } },
    ],
    [
      "the handler crashed (the answer hides the message, the local record keeps it)",
      "crashed",
      500,
      { error: { code: "internal", message: "Internal error" } },
      { result: "failed", error: { code: "internal", message: "x is not a function", stack: expect.any(String) } },
    ],
  ] as const)("%s", async (_name, how, status, answer, outcome) => {
    const before = (await recorded()).at(-1)?.seq ?? 0;
    // A handler's error, a platform error too, is logged: the dev terminal and the project's log show it.
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const response = await callProjectWorker(local, project, {
      method: "POST",
      pathAndQuery: "/__plugin/outcomes",
      body: JSON.stringify({ kind: "event", name: "message", how }),
    });
    expect(response.status).toBe(status);
    expect(await response.json()).toMatchObject(answer);
    const list = await recorded();
    expect(list.at(-1)).toEqual({ seq: before + 1, kind: "event", name: "message", status, ...outcome });
    const failed = outcome.result === "failed";
    expect(logged.mock.calls.map((call) => call[0])).toEqual(failed ? ["plugin outcomes handler failed:"] : []);
    if (failed) expect((logged.mock.calls[0]![1] as Error).message).toBe(outcome.error.message);
    logged.mockRestore();
  });

  it("keeps the last 20 only", async () => {
    for (let i = 0; i < 25; i++)
      await callProjectWorker(local, project, {
        method: "POST",
        pathAndQuery: "/__plugin/outcomes",
        body: JSON.stringify({ how: "ran" }),
      });
    expect(await recorded()).toHaveLength(20);
  });

  it("serves the record under platform dev only, and only to the platform", async () => {
    const deployed = await callProjectWorker(dispatcherFor(projectEnv), project, {
      method: "GET",
      pathAndQuery: "/__plugin/outcomes",
    });
    expect(deployed.status).toBe(404);
    const external = await worker.fetch!(
      new Request("https://shop.example.test/__plugin/outcomes") as never,
      localEnv,
      createExecutionContext(),
    );
    expect(external.status).toBe(404);
    await callProjectWorker(dispatcherFor(projectEnv), project, {
      method: "POST",
      pathAndQuery: "/__plugin/outcomes",
      body: '{"how":"refused"}',
    });
    expect((await recorded()).some((o) => o.kind === null && o.result === "failed")).toBe(false);
  });
});

describe("pluginCall", () => {
  function envWith(answer: (request: Request) => Response | Promise<Response>, requests: Request[] = []): PlatformEnv {
    return {
      ...projectEnv,
      CHATSERVER_PLUGIN: {
        fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
          const request = new Request(input, init);
          requests.push(request.clone());
          return answer(request);
        },
      },
    };
  }

  it("signs an identity token over method, path and body, and resolves the JSON answer", async () => {
    const requests: Request[] = [];
    const result = await pluginCall(
      envWith(() => Response.json({ ok: 1 }), requests),
      "chatserver",
      "/proxy/reply",
      { body: { a: 1 }, ...{ idempotencyKey: "k" } },
    );
    expect(result).toEqual({ ok: 1 });
    const [request] = requests;
    expect(request!.headers.get("idempotency-key")).toBe("k");
    const check = await verifyRequestToken(
      "identity",
      request!.headers.get(IDENTITY_HEADER),
      { method: "POST", pathAndQuery: "/proxy/reply", body: await request!.text() },
      { lookupSecret: (id) => (id === "7" ? SECRET : null) },
    );
    expect(check).toEqual({ ok: true, projectId: "7" });
  });

  it.each([
    [
      "rate_limited with Retry-After",
      () =>
        Response.json(
          { error: { code: "rate_limited", message: "slow" } },
          { status: 429, headers: { "retry-after": "9" } },
        ),
      "rate_limited",
      "slow",
      { retryAfterSeconds: 9 },
    ],
    [
      "rate_limited with details",
      () =>
        Response.json(
          { error: { code: "rate_limited", message: "slow", details: { retryAfterSeconds: 4, bucket: "actions" } } },
          { status: 429, headers: { "retry-after": "4" } },
        ),
      "rate_limited",
      "slow",
      { retryAfterSeconds: 4, bucket: "actions" },
    ],
    [
      "revoked",
      () => Response.json({ error: { code: "revoked", message: "reinstall" } }, { status: 409 }),
      "revoked",
      "reinstall",
      undefined,
    ],
    [
      "an unknown code",
      () => Response.json({ error: { code: "weird", message: "hm" } }, { status: 418 }),
      "upstream_error",
      "hm",
      undefined,
    ],
    [
      "a non-JSON 500",
      () => new Response("boom", { status: 500 }),
      "upstream_error",
      "The chat-server plugin answered 500.",
      undefined,
    ],
  ] as const)("maps %s to a PlatformError", async (_name, answer, code, message, details) => {
    const error = await pluginCall(envWith(answer), "chatserver", "/proxy/reply", { body: {} }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(PlatformError);
    expect({
      code: (error as PlatformError).code,
      message: (error as PlatformError).message,
      details: (error as PlatformError).details,
    }).toEqual({ code, message, details });
  });

  it.each(PLUGINS.map((plugin) => [plugin.id, plugin.binding, plugin] as const))(
    "reaches %s through %s at each of its routes, and names both when the binding is missing",
    async (id, binding, plugin) => {
      const requests: string[] = [];
      const worker = {
        fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
          requests.push(`${init?.method} ${new URL(String(input)).pathname}`);
          return Response.json({ ok: true });
        },
      };
      for (const route of plugin.routes)
        await pluginCall({ ...projectEnv, [binding]: worker }, id, route, { body: {} });
      expect(requests).toEqual(plugin.routes.map((route) => `POST ${route}`));
      const error = (await pluginCall(projectEnv, id, plugin.routes[0]!, { body: {} }).catch(
        (e: unknown) => e,
      )) as PlatformError;
      expect([error.code, error.message]).toEqual([
        "not_ready",
        `The ${plugin.title} plugin is not available: this project worker has no ${binding} binding.`,
      ]);
    },
  );

  it("fails with not_ready when the binding or the secret is missing", async () => {
    expect(
      (
        (await pluginCall(projectEnv, "workspace", "/proxy/send-message", { body: {} }).catch(
          (e: unknown) => e,
        )) as PlatformError
      ).message,
    ).toMatch(/no WORKSPACE_PLUGIN binding/);
    const noSecret = { CHATSERVER_PLUGIN: envWith(() => Response.json({})).CHATSERVER_PLUGIN };
    expect(
      (
        (await pluginCall(noSecret, "chatserver", "/proxy/reply", { body: {} }).catch(
          (e: unknown) => e,
        )) as PlatformError
      ).code,
    ).toBe("not_ready");
  });
});

// Compile-time (npm run typecheck): a plugin's calls take only the routes its descriptor names.
// @ts-expect-error /proxy/reply is the chat server's route, not the workspace's.
void (() => pluginCall(projectEnv, "workspace", "/proxy/reply", { body: {} }));
