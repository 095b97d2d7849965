/**
 * createPlatformWorker wraps a project's default export (a Router, a plain { fetch }, a class
 * instance) with the platform's routes before user code. Its errors, internal routes and base
 * path are in createPlatformWorker.<aspect>.workerd.test.ts; the test project in its fixture.
 */
import { createExecutionContext } from "cloudflare:test";
import { Router } from "itty-router";
import { describe, expect, it } from "vitest";
import { createPlatformWorker, type ProjectExport } from "#src/runtime/entry/createPlatformWorker.ts";
import type { PlatformEnv } from "#src/runtime/entry/platformEnv.ts";
import { PlatformRuntime } from "#src/runtime/entry/platformRuntime.ts";
import { createWorker, ORIGIN, projectEnv, recordingProject, run } from "./createPlatformWorker.fixture.ts";

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
