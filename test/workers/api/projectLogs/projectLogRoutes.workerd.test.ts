import { createExecutionContext, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import api from "#src/workers/api/index.ts";
import {
  LOG_RETENTION,
  MAPS_KEPT,
  OLDER_BUILD,
  REQUEST_LINE_RETENTION,
} from "#src/workers/api/projectLogs/ProjectLog.ts";
import type { LogEntry } from "#src/workers/api/projectLogs/logEntry.ts";
import { REQUESTS_KEPT_PER_WINDOW } from "#src/workers/api/projectLogs/requestBudget.ts";
import { projectLogOf, recordTraces } from "#src/workers/api/projectLogs/projectLogRoutes.ts";
import type { ApiEnv } from "#src/workers/api/env.ts";

const apiEnv = env as unknown as ApiEnv;

async function call(method: string, path: string, token: string | null) {
  const response = await api.fetch(
    new Request(`https://api.test${path}`, { method, headers: token ? { authorization: `Bearer ${token}` } : {} }),
    env as never,
    createExecutionContext(),
  );
  const text = await response.text();
  return { status: response.status, text, json: JSON.parse(text) as any };
}

async function userWithProject(email: string, slug: string) {
  const issued = await api.fetch(
    new Request("https://api.test/admin/users", {
      method: "POST",
      headers: { authorization: "Bearer test-admin-token", "content-type": "application/json" },
      body: JSON.stringify({ email }),
    }),
    env as never,
    createExecutionContext(),
  );
  const token = ((await issued.json()) as { token: string }).token;
  const created = await api.fetch(
    new Request("https://api.test/projects", {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ slug }),
    }),
    env as never,
    createExecutionContext(),
  );
  const project = ((await created.json()) as { project: { id: number; scriptName: string } }).project;
  return { token, id: project.id, script: project.scriptName };
}

const T0 = Date.UTC(2026, 10, 22, 10, 0, 0);

/** A trace as the runtime hands a Tail Worker one. */
function trace(fields: Partial<Record<keyof TraceItem, unknown>>): TraceItem {
  return {
    scriptName: null,
    event: null,
    eventTimestamp: T0,
    logs: [],
    exceptions: [],
    diagnosticsChannelEvents: [],
    outcome: "ok",
    executionModel: "stateless",
    truncated: false,
    cpuTime: 0,
    wallTime: 0,
    ...fields,
  } as unknown as TraceItem;
}

const request = (path: string, status: number | null, wallTime = 7) =>
  trace({
    event: {
      request: { method: "GET", url: `https://shop.example.test${path}`, headers: {} },
      ...(status ? { response: { status } } : {}),
    },
    wallTime,
  });

describe("a project's log, fed by the Tail Worker handler", () => {
  it("keeps each project's requests, console lines and exceptions apart, by the trace's script", async () => {
    const shop = await userWithProject("ada@example.com", "shop");
    const blog = await userWithProject("bob@example.com", "blog");
    await recordTraces(
      apiEnv,
      [
        request("/api/hello?name=Ada", 200),
        trace({
          scriptName: blog.script,
          logs: [{ timestamp: T0 + 1, level: "log", message: ["blog secret line", { n: 1 }] }],
        }),
        trace({ scriptName: "proj-nobody", logs: [{ timestamp: T0, level: "log", message: ["no project's"] }] }),
      ],
      shop.script,
    );
    await recordTraces(
      apiEnv,
      [
        trace({
          logs: [
            { timestamp: T0 + 2, level: "log", message: ["Re-enqueued 0 workflow(s)"] },
            {
              timestamp: T0 + 3,
              level: "error",
              message: ["Unhandled error in project worker:", "Error: kaboom"],
              errorInfo: [{ name: "Error", message: "kaboom", stack: "Error: kaboom\n    at explode (worker.js:3:9)" }],
            },
          ],
          exceptions: [
            {
              timestamp: T0 + 4,
              name: "TypeError",
              message: "x is not a function",
              stack: "TypeError: x\n    at f (worker.js:1:1)",
            },
          ],
          event: { request: { method: "POST", url: "https://shop.example.test/boom", headers: {} } },
        }),
        // The platform's own calls into the project: their output, but no request line.
        trace({
          event: {
            request: { method: "POST", url: "https://shop.internal/__workflow/r1/execute", headers: {} },
            response: { status: 200 },
          },
          logs: [{ timestamp: T0 + 5, level: "log", message: ["in a step"] }],
        }),
      ],
      shop.script,
    );

    const shopLog = await call("GET", "/projects/shop/logs", shop.token);
    expect(shopLog.status).toBe(200);
    expect(shopLog.json.entries.map(({ seq: _seq, ...entry }: { seq: number }) => entry)).toEqual([
      { kind: "request", at: T0, method: "GET", path: "/api/hello?name=Ada", status: 200, ms: 7 },
      {
        kind: "console",
        at: T0 + 3,
        level: "error",
        message: "Unhandled error in project worker: Error: kaboom",
        stack: "Error: kaboom\n    at explode (worker.js:3:9)",
      },
      {
        kind: "exception",
        at: T0 + 4,
        name: "TypeError",
        message: "x is not a function",
        stack: "TypeError: x\n    at f (worker.js:1:1)",
      },
      // No response: the invocation threw before answering. workerd measures no wall time: the time the trace took to arrive.
      { kind: "request", at: T0, method: "POST", path: "/boom", status: 500, ms: expect.any(Number) },
      { kind: "console", at: T0 + 5, level: "log", message: "in a step" },
    ]);
    expect(shopLog.text).not.toContain("blog secret line");
    expect(shopLog.text).not.toContain("no project's");

    const blogLog = await call("GET", "/projects/blog/logs", blog.token);
    expect(blogLog.json.entries.map((e: { message: string }) => e.message)).toEqual(['blog secret line {"n":1}']);
    // Another account's project reads as missing; no token, 401.
    expect((await call("GET", "/projects/blog/logs", shop.token)).status).toBe(404);
    expect((await call("GET", "/projects/shop/logs", null)).status).toBe(401);
  });

  it("follows: after a cursor, and a read that waits is answered by the next append", async () => {
    const { token, script } = await userWithProject("ada@example.com", "follow");
    await recordTraces(apiEnv, [request("/one", 200)], script);
    const first = await call("GET", "/projects/follow/logs", token);
    const cursor = first.json.cursor as number;
    expect(first.json.entries).toHaveLength(1);
    const waiting = call("GET", `/projects/follow/logs?after=${cursor}&waitMS=20000`, token);
    await recordTraces(apiEnv, [request("/two", 201)], script);
    const next = await waiting;
    expect(next.json.entries.map((e: { path: string }) => e.path)).toEqual(["/two"]);
    expect(next.json.cursor).toBeGreaterThan(cursor);
    // Nothing new and no wait: an empty page, the same cursor.
    const quiet = await call("GET", `/projects/follow/logs?after=${next.json.cursor}`, token);
    expect(quiet.json).toEqual({ entries: [], cursor: next.json.cursor });
  });

  it("shows a run id in a request line where the runtime's trace redacted it, and still redacts a key", async () => {
    const { token, script } = await userWithProject("ada@example.com", "runids");
    const runId = `${"ab12".repeat(16)}.b8lf1wyit528`;
    const key = "0123456789abcdef".repeat(4);
    // As workerd hands a Tail Worker the request: `url` redacted by its rule, the real one behind getUnredacted().
    const redactedByRuntime = (path: string, real: string) =>
      trace({
        event: {
          request: {
            method: "GET",
            url: `https://shop.example.test${path}`,
            headers: {},
            getUnredacted: () => ({ method: "GET", url: `https://shop.example.test${real}`, headers: {} }),
          },
          response: { status: 200 },
        },
      });
    await recordTraces(
      apiEnv,
      [
        redactedByRuntime("/api/runs/REDACTED.b8lf1wyit528", `/api/runs/${runId}`),
        redactedByRuntime("/hook/REDACTED", `/hook/${key}`),
      ],
      script,
    );
    const log = await call("GET", "/projects/runids/logs", token);
    expect(log.json.entries.map((e: { path: string }) => e.path)).toEqual([`/api/runs/${runId}`, "/hook/REDACTED"]);
    expect(log.text).not.toContain(key);
  });

  it.each([
    ["after=-1", "after must be a whole number"],
    ["limit=0", "limit must be a whole number from 1 to 500"],
    ["limit=501", "limit must be a whole number from 1 to 500"],
    ["waitMS=25001", "waitMS must be a whole number from 0 to 25000"],
    ["waitMS=soon", "waitMS must be a whole number"],
  ])("?%s is refused: %s", async (query, message) => {
    const { token } = await userWithProject("ada@example.com", "params");
    const answer = await call("GET", `/projects/params/logs?${query}`, token);
    expect(answer.status).toBe(400);
    expect(answer.json.error.message).toContain(message);
  });

  it(`keeps the newest ${LOG_RETENTION} entries`, async () => {
    const { token, id } = await userWithProject("ada@example.com", "long");
    const log = projectLogOf(apiEnv, id)!;
    await log.append(
      Array.from({ length: LOG_RETENTION + 5 }, (_, i) => ({
        kind: "console" as const,
        at: T0 + i,
        level: "log",
        message: `line ${i}`,
      })),
    );
    const page = await call("GET", "/projects/long/logs?after=0&limit=500", token);
    expect(page.json.entries[0].message).toBe("line 5");
  });

  it("keeps the project's earlier lines and errors readable through 2,000 anonymous requests, which it counts", async () => {
    const { token, script, id } = await userWithProject("ada@example.com", "flood");
    await recordTraces(
      apiEnv,
      [
        trace({ logs: [{ timestamp: T0, level: "log", message: ["order 42 paid"] }] }),
        trace({ exceptions: [{ timestamp: T0 + 1, name: "TypeError", message: "x is not a function" }] }),
      ],
      script,
    );
    // The attack: anonymous requests, in the batches the runtime hands over.
    for (let batch = 0; batch < 20; batch++)
      await recordTraces(
        apiEnv,
        Array.from({ length: 100 }, () => request("/", 404)),
        script,
      );
    // The window's count is written out by a line of a later window (or by the log's alarm a window on).
    await projectLogOf(apiEnv, id)!.append([
      { kind: "console", at: T0 + 60_000, level: "log", message: "a minute on" },
    ]);
    const page = await call("GET", "/projects/flood/logs?after=0&limit=500", token);
    const entries = page.json.entries as { kind: string; message?: string; count?: number }[];
    expect(entries.slice(0, 2).map((e) => e.message)).toEqual(["order 42 paid", "x is not a function"]);
    expect(entries.filter((e) => e.kind === "request")).toHaveLength(REQUESTS_KEPT_PER_WINDOW);
    expect(entries.filter((e) => e.kind === "requests_skipped").map((e) => e.count)).toEqual([1000, 900]);
    expect(entries).toHaveLength(2 + REQUESTS_KEPT_PER_WINDOW + 2 + 1);
  });

  it(`keeps the newest ${REQUEST_LINE_RETENTION} request lines apart from the project's own lines`, async () => {
    const { id } = await userWithProject("ada@example.com", "lanes");
    const log = projectLogOf(apiEnv, id)!;
    await log.append([{ kind: "console", at: T0, level: "log", message: "the first line" }]);
    // Within each window's budget, over many windows: more request lines than the log keeps.
    const windows = Math.ceil(REQUEST_LINE_RETENTION / REQUESTS_KEPT_PER_WINDOW) + 1;
    for (let w = 0; w < windows; w++)
      await log.append(
        Array.from({ length: REQUESTS_KEPT_PER_WINDOW }, (_, i) => ({
          kind: "request" as const,
          at: T0 + w * 60_000 + i,
          method: "GET",
          path: `/w${w}/${i}`,
          status: 200,
          ms: 1,
        })),
      );
    const entries: LogEntry[] = [];
    let cursor = 0;
    for (;;) {
      const page = await log.read({ after: cursor, limit: 500, waitMS: 0 });
      if (page.entries.length === 0) break;
      entries.push(...page.entries);
      cursor = page.cursor;
    }
    expect(entries.filter((e) => e.kind === "console").map((e) => (e as { message: string }).message)).toEqual([
      "the first line",
    ]);
    expect(entries.filter((e) => e.kind === "request")).toHaveLength(REQUEST_LINE_RETENTION);
  });

  it("points stacks at the sources with the current version's map, and forgets it with a version that has none", async () => {
    const { id } = await userWithProject("ada@example.com", "mapped");
    const log = projectLogOf(apiEnv, id)!;
    // worker.js line 1: columns 0 and 10 come from src/index.ts 4:2 and 9:4.
    await log.setSourceMap({ version: 3, sources: ["src/index.ts"], mappings: "AAGC,UAKE" });
    const stack = "Error: kaboom\n    at explode (file:///state/scripts/proj-mapped/modules/worker.js:1:12)";
    expect(await log.mapStacks([stack])).toEqual(["Error: kaboom\n    at explode (src/index.ts:9:4)"]);
    await log.append([{ kind: "console", at: T0, level: "error", message: "x", stack }]);
    const [entry] = (await log.read({ limit: 1, waitMS: 0 })).entries;
    expect(entry).toMatchObject({ stack: "Error: kaboom\n    at explode (src/index.ts:9:4)" });
    await log.setSourceMap(null);
    expect(await log.mapStacks([stack])).toEqual([stack]);
  });

  it("maps each stack with the version that threw it, and marks one whose version's map is no longer kept", async () => {
    const { id } = await userWithProject("ada@example.com", "versions");
    const log = projectLogOf(apiEnv, id)!;
    const map = (source: string) => ({ version: 3 as const, sources: [source], mappings: "AAGC,UAKE" });
    const stack = "Error: kaboom\n    at explode (file:///state/scripts/proj-versions/modules/worker.js:1:12)";
    const at = (source: string) => `Error: kaboom\n    at explode (${source}:9:4)`;
    await log.setSourceMap(map("src/first.ts"), "worker.js", T0);
    await log.setSourceMap(map("src/second.ts"), "worker.js", T0 + 1000);
    expect(await log.mapStacks([stack, stack, stack, stack], [T0 - 5, T0 + 1, T0 + 2000, undefined])).toEqual([
      // Thrown before the first map this log had: the oldest is the one, no map was dropped.
      at("src/first.ts"),
      at("src/first.ts"),
      at("src/second.ts"),
      at("src/second.ts"),
    ]);
    for (let version = 2; version < MAPS_KEPT + 1; version++)
      await log.setSourceMap(map(`src/v${version}.ts`), "worker.js", T0 + version * 1000);
    expect(await log.mapStacks([stack, stack], [T0 + 1, T0 + 2500])).toEqual([
      `${stack} ${OLDER_BUILD}`,
      at("src/v2.ts"),
    ]);
  });
});
