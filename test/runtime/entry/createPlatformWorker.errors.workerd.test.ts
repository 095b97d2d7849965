/**
 * What createPlatformWorker answers when user code fails: a thrown PlatformError keeps its status
 * and code, a missing route is a JSON 404, anything else a 500 that leaks nothing; under platform
 * dev (PLATFORM_LOCAL with the dev stack binding) the 500 shows the mapped stack.
 */
import { Router } from "itty-router";
import { describe, expect, it } from "vitest";
import { PlatformError, type PlatformErrorCode } from "#src/core/errors.ts";
import type { ProjectExport } from "#src/runtime/entry/createPlatformWorker.ts";
import type { PlatformEnv } from "#src/runtime/entry/platformEnv.ts";
import { expectError } from "#test/support/workerd/index.ts";
import { createWorker, ORIGIN, projectEnv, run } from "./createPlatformWorker.fixture.ts";

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
