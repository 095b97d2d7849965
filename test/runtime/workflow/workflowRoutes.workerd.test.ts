/**
 * The project worker's internal workflow routes, through the real entry
 * wrapper (createPlatformWorker around a tiny router) with the Durable Object
 * bindings, called the way the platform calls them: an `internal` token signed
 * with the project's worker secret. Then the whole queue path: the API
 * worker's consumer, a dispatcher that reaches the wrapped project worker, and
 * the run's actor.
 */
import {
  createExecutionContext,
  createMessageBatch,
  env,
  getQueueResult,
  runDurableObjectAlarm,
  runInDurableObject,
} from "cloudflare:test";
import { Router } from "itty-router";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { durableObjectSql } from "#src/objects/durableObjectSql.ts";
import { runIndexOf } from "#src/objects/runIndexClient.ts";
import type { WorkflowActorEnv } from "#src/runtime/workflow/workflowActorClient.ts";
import { createPlatformWorker } from "#src/runtime/entry/createPlatformWorker.ts";
import type { PlatformEnv } from "#src/runtime/entry/platformEnv.ts";
import type { WorkflowRunView } from "#src/engine/describeRun.ts";
import { systemClock, type Clock } from "#src/engine/clock.ts";
import { workflowRunHost } from "#src/objects/workflowRunHost.ts";
import { createSqlEventStore } from "#src/engine/sqlEventStore.ts";
import type { RunListPage } from "#src/engine/store.ts";
// What user code pulls in by importing `workflow` from "platform": the engine plus its wiring into the worker's runtime.
import { workflow } from "#src/runtime/workflow/index.ts";
import { INTERNAL_HEADER, signRequestToken } from "#src/core/requestToken.ts";
import type { WorkflowExecuteMessage } from "#src/workers/api/env.ts";
import { consumeWorkflowQueue } from "#src/workers/api/workflowExecution.ts";
import type { Dispatcher } from "#src/workers/dispatch/dispatcher.ts";
import { apiHarness, expectError, userWithProject } from "#test/support/workerd/index.ts";

const SECRET = "ab".repeat(32);
const OTHER_SECRET = "cd".repeat(32);
const PROJECT_ID = "7";
const ORIGIN = "https://shop.internal";

// ---------------------------------------------------------------------------
// The project: workflows registered at top level, as user code does, and a
// tiny router.
// ---------------------------------------------------------------------------

// Gates are created by the test before a run starts (see workflowActor.test.ts for why).
const gates = new Map<string, { promise: Promise<void>; open: () => void }>();
function gateFor(id: string) {
  let entry = gates.get(id);
  if (!entry) {
    let open!: () => void;
    const promise = new Promise<void>((resolve) => {
      open = resolve;
    });
    entry = { promise, open };
    gates.set(id, entry);
  }
  return entry;
}

workflow("greet", {
  start: async (ctx) => {
    ctx.write("greeting", "hello");
    return { step: "finish" };
  },
  finish: async (ctx) => ({ done: true, result: { text: `${ctx.scratchpad.greeting} ${ctx.data?.name}` } }),
});
workflow("gated", {
  start: async (ctx) => {
    const gate = gates.get(ctx.workflowId);
    if (!gate) throw new Error(`test bug: no gate for ${ctx.workflowId}`);
    await gate.promise;
    return { done: true, result: ctx.data };
  },
});
workflow(
  "patient",
  {
    start: async () => {
      throw new Error("later");
    },
  },
  { backoff: { initialMS: 60_000, maxMS: 60_000, jitter: 0 } },
);

/** Simulated time added to the actors' clock: a backoff waited out, a step-loop budget spent. */
let clockOffset = 0;
const testClock: Clock = () => systemClock() + clockOffset;

// Fails its first attempt, then waits out a minute's backoff: a run that waits for its alarm.
const flakyAttempts = new Map<string, number>();
workflow(
  "flaky",
  {
    start: async (ctx) => {
      const attempt = (flakyAttempts.get(ctx.runId) ?? 0) + 1;
      flakyAttempts.set(ctx.runId, attempt);
      if (attempt === 1) throw new Error("not yet");
      return { done: true, result: { attempt } };
    },
  },
  { backoff: { initialMS: 60_000, maxMS: 60_000, jitter: 0 } },
);
// Its first step spends the whole step-loop budget (simulated), so the loop stops with work left.
workflow("marathon", {
  start: async (ctx) => {
    await gateFor(ctx.workflowId).promise;
    clockOffset += 51_000;
    return { step: "finish" };
  },
  finish: async () => ({ done: true, result: "finished" }),
});

// Waits for an `approval` event (beyond the spec), then ends with it.
workflow("approval", {
  start: async () => ({ step: "approved", waitFor: "approval" }),
  approved: async (ctx) => ({ done: true, result: ctx.event }),
});

let userCodeCalls = 0;
const router = Router();
router.get("/hello", () => new Response("hello from user code"));
router.all("*", () => {
  userCodeCalls++;
  return new Response("user code");
});
const worker = createPlatformWorker(router);

/** The bindings the platform gives a project worker that uses workflows. */
function projectEnvFor(id: string | number = PROJECT_ID, secret = SECRET): PlatformEnv & WorkflowActorEnv {
  return {
    PLATFORM_WORKER_SECRET: secret,
    PLATFORM_PROJECT_ID: String(id),
    WORKFLOW_RUNS: env.WORKFLOW_RUNS,
    WORKFLOW_RUN_INDEX: env.WORKFLOW_RUN_INDEX,
  };
}

let projectEnv = projectEnvFor();

interface Call {
  body?: string;
  /** "valid" (default): signed for exactly this request with the project's secret; null: no header; any other string is sent as is. */
  token?: string | null;
}

async function call(method: string, path: string, options: Call = {}): Promise<Response> {
  const body = options.body ?? null;
  const token =
    options.token === undefined || options.token === "valid"
      ? await signRequestToken("internal", projectEnv.PLATFORM_PROJECT_ID!, projectEnv.PLATFORM_WORKER_SECRET!, {
          method,
          pathAndQuery: path,
          body,
        })
      : options.token;
  const headers = new Headers();
  if (token !== null) headers.set(INTERNAL_HEADER, token);
  if (body !== null) headers.set("content-type", "application/json");
  const request = new Request(ORIGIN + path, { method, headers, body });
  return worker.fetch!(request as Request<unknown, IncomingRequestCfProperties>, projectEnv, createExecutionContext());
}

const start = (body: unknown, options: Call = {}) =>
  call("POST", "/__workflow/start", { body: typeof body === "string" ? body : JSON.stringify(body), ...options });

async function startRun(
  name: string,
  data: unknown,
  id?: string,
): Promise<{ runId: string; workflowId: string; name: string; created: boolean }> {
  const response = await start(id === undefined ? { name, data } : { name, data, id });
  expect(response.status, await response.clone().text()).toBe(201);
  return response.json();
}

async function getRun(runId: string): Promise<WorkflowRunView> {
  const response = await call("GET", `/__workflow/runs/${encodeURIComponent(runId)}`);
  expect(response.status, await response.clone().text()).toBe(200);
  return response.json();
}

/** Reads a run's log from its actor's SQLite without calling the actor. */
async function lastEventType(runId: string): Promise<string | undefined> {
  const actor = env.WORKFLOW_RUNS.get(env.WORKFLOW_RUNS.idFromString(runId.split(".")[0]!));
  return runInDurableObject(
    actor,
    (_instance, state) => createSqlEventStore(durableObjectSql(state.storage)).lastEvent(runId)?.type,
  );
}

async function waitUntilTerminal(runId: string): Promise<WorkflowRunView> {
  let view!: WorkflowRunView;
  await vi.waitFor(
    async () => {
      view = await getRun(runId);
      expect(view.status).not.toBe("running");
    },
    { timeout: 5000, interval: 20 },
  );
  return view;
}

const types = (view: WorkflowRunView) => view.events.map((e) => e.type);

beforeEach(() => {
  gates.clear();
  userCodeCalls = 0;
  // A fresh environment object: the entry wrapper initializes the platform (installs the
  // Durable Object backend) on its first request, as in a fresh isolate.
  projectEnv = projectEnvFor();
});

afterEach(() => {
  for (const gate of gates.values()) gate.open();
});

// ---------------------------------------------------------------------------

describe("POST /__workflow/start", () => {
  it("creates a run (201) that the actor's alarm drives to the end; GET /__workflow/runs/:id shows it", async () => {
    const started = await startRun("greet", { name: "Ada" });
    expect(started).toEqual({
      runId: expect.stringMatching(/^[0-9a-f]{64}\.[a-z0-9]{12}$/),
      workflowId: started.runId,
      name: "greet",
      created: true,
    });
    const view = await waitUntilTerminal(started.runId);
    expect(view).toMatchObject({
      id: started.runId,
      name: "greet",
      status: "completed",
      result: { text: "hello Ada" },
    });
    expect(types(view)).toEqual([
      "workflow_created",
      "step_started",
      "step_completed",
      "step_started",
      "step_completed",
      "workflow_completed",
    ]);
    expect(userCodeCalls).toBe(0);
  });

  it("answers 200 with the active run for an id in use (created: false), 409 when another workflow holds the id", async () => {
    gateFor("order-1");
    const first = await start({ name: "gated", data: { n: 1 }, id: "order-1" });
    expect(first.status).toBe(201);
    const firstBody = (await first.json()) as { runId: string; created: boolean };
    expect(firstBody).toMatchObject({ workflowId: "order-1", name: "gated", created: true });

    const again = await start({ name: "gated", data: { n: 2 }, id: "order-1" });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({
      runId: firstBody.runId,
      workflowId: "order-1",
      name: "gated",
      created: false,
    });

    const other = await start({ name: "greet", data: null, id: "order-1" });
    const error = await expectError(other, 409, "already_active");
    expect(error).toMatchObject({ error: { details: { activeRunId: firstBody.runId } } });

    gateFor("order-1").open();
    expect(await waitUntilTerminal(firstBody.runId)).toMatchObject({ status: "completed", result: { n: 1 } });
    // Finished: the id is free again, for a new run in the same actor.
    const later = await start({ name: "greet", data: { name: "Bo" }, id: "order-1" });
    expect(later.status).toBe(201);
    const laterBody = (await later.json()) as { runId: string };
    expect(laterBody.runId).not.toBe(firstBody.runId);
    expect(laterBody.runId.split(".")[0]).toBe(firstBody.runId.split(".")[0]);
  });

  it("answers 404 unknown_workflow for a name no code registered, and creates nothing", async () => {
    const body = await expectError(await start({ name: "nope", data: {} }), 404, "unknown_workflow");
    expect(body.error.message).toContain("greet");
    expect(await (await call("GET", "/__workflow/runs")).json()).toEqual({ runs: [] });
  });

  it.each([
    { name: "malformed JSON", body: '{"name":', code: "malformed_json" },
    { name: "an empty body", body: "", code: "malformed_json" },
    { name: "a JSON array", body: '["greet"]', code: "malformed_json" },
    { name: "no name", body: JSON.stringify({ data: {} }), code: "invalid_input" },
    { name: "a numeric name", body: JSON.stringify({ name: 42 }), code: "invalid_input" },
    { name: "a numeric id", body: JSON.stringify({ name: "greet", id: 42 }), code: "invalid_input" },
    { name: "an empty id", body: JSON.stringify({ name: "greet", id: "" }), code: "invalid_input" },
    { name: "an id with a newline", body: JSON.stringify({ name: "greet", id: "a\nb" }), code: "invalid_input" },
    {
      name: "an id over 256 characters",
      body: JSON.stringify({ name: "greet", id: "x".repeat(257) }),
      code: "invalid_input",
    },
  ])("answers 400 ($code) for $name and creates nothing", async ({ body, code }) => {
    await expectError(await start(body), 400, code);
    expect((await (await call("GET", "/__workflow/runs")).json()) as RunListPage).toEqual({ runs: [] });
  });

  it("answers 413 for start data over the 1 MiB event limit (inside the 1 MiB body limit), and creates nothing", async () => {
    const body = JSON.stringify({ name: "greet", data: "x".repeat(1024 * 1024 - 40) });
    expect(body.length).toBeLessThanOrEqual(1024 * 1024);
    await expectError(await start(body), 413, "payload_too_large");
    expect(((await (await call("GET", "/__workflow/runs")).json()) as RunListPage).runs).toEqual([]);
  });
});

describe("GET /__workflow/runs and /__workflow/runs/:id", () => {
  it("lists newest first with name and status filters, limit and cursor", async () => {
    const done: string[] = [];
    for (const name of ["a", "b", "c"]) {
      const { runId } = await startRun("greet", { name });
      await waitUntilTerminal(runId);
      done.push(runId);
    }
    gateFor("g1");
    gateFor("g2");
    const g1 = (await startRun("gated", null, "g1")).runId;
    const g2 = (await startRun("gated", null, "g2")).runId;
    for (const runId of done)
      await vi.waitFor(async () => expect((await runIndexOf(projectEnv).get(runId))?.status).toBe("completed"));

    const list = async (query: string) => {
      const response = await call("GET", `/__workflow/runs${query}`);
      expect(response.status, await response.clone().text()).toBe(200);
      return (await response.json()) as RunListPage;
    };
    const ids = (page: RunListPage) => page.runs.map((r) => r.id);
    expect(ids(await list(""))).toEqual([g2, g1, done[2], done[1], done[0]]);
    expect(ids(await list("?status=running"))).toEqual([g2, g1]);
    expect(ids(await list("?status=completed&name=gated"))).toEqual([]);
    const page1 = await list("?name=greet&status=completed&limit=2");
    expect(ids(page1)).toEqual([done[2], done[1]]);
    expect(page1.cursor).toEqual(expect.any(String));
    const page2 = await list(`?name=greet&status=completed&limit=2&cursor=${encodeURIComponent(page1.cursor!)}`);
    expect(ids(page2)).toEqual([done[0]]);
    expect(page2.cursor).toBeUndefined();
    expect(page1.runs[0]).toEqual({
      id: done[2],
      workflowId: done[2],
      name: "greet",
      status: "completed",
      step: "finish",
      createdAt: expect.any(Number),
      updatedAt: expect.any(Number),
      expiresAt: expect.any(Number),
    });
  });

  it.each([
    { query: "?limit=abc", field: "limit" },
    { query: "?limit=0", field: "limit" },
    { query: "?limit=101", field: "limit" },
    { query: "?limit=1.5", field: "limit" },
    { query: "?limit=-1", field: "limit" },
    { query: "?limit=", field: "limit" },
    { query: "?status=done", field: "status" },
    { query: "?status=", field: "status" },
    { query: "?status=RUNNING", field: "status" },
    { query: "?name=", field: "name" },
    { query: "?cursor=", field: "cursor" },
    { query: "?cursor=not-a-cursor", field: "cursor" },
  ])("answers 400 invalid_input for $query", async ({ query, field }) => {
    const body = await expectError(await call("GET", `/__workflow/runs${query}`), 400, "invalid_input");
    expect(body.error.message).toContain(field);
  });

  it("answers 404 for a run that does not exist, whatever shape its id has", async () => {
    const { runId } = await startRun("greet", { name: "Ada" });
    const [hex] = runId.split(".") as [string, string];
    for (const id of [
      `${hex}.zzzzzzzzzzzz`,
      `${env.WORKFLOW_RUNS.newUniqueId()}.zzzzzzzzzzzz`,
      `${"0".repeat(64)}.zzzzzzzzzzzz`,
      `${env.WORKFLOW_RUN_INDEX.idFromName("index")}.zzzzzzzzzzzz`,
      "run_1",
    ]) {
      const response = await call("GET", `/__workflow/runs/${encodeURIComponent(id)}`);
      await expectError(response, 404, "not_found");
    }
  });

  it("answers 404, not 500, for a run id that is not valid percent-encoding", async () => {
    await expectError(await call("GET", "/__workflow/runs/%E0%A4%A"), 404, "not_found");
    await expectError(await call("POST", "/__workflow/%E0%A4%A/execute"), 404, "not_found");
    await expectError(await call("GET", "/__workflow/runs/%"), 404, "not_found");
  });
});

describe("POST /__workflow/:runId/execute", () => {
  it("joins the step loop under way and answers {done:true} once the run finished", async () => {
    gateFor("exec-1");
    const { runId } = await startRun("gated", "payload", "exec-1");
    await vi.waitFor(async () => expect(await lastEventType(runId)).toBe("step_started"));
    const executing = call("POST", `/__workflow/${encodeURIComponent(runId)}/execute`);
    const early = await Promise.race([
      executing.then(() => "answered"),
      new Promise((resolve) => setTimeout(() => resolve("waiting"), 100)),
    ]);
    expect(early).toBe("waiting");
    gateFor("exec-1").open();
    const response = await executing;
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ done: true });
    expect(await getRun(runId)).toMatchObject({ status: "completed", result: "payload" });
    // Again, for a finished run: still done, nothing appended.
    expect(await (await call("POST", `/__workflow/${encodeURIComponent(runId)}/execute`)).json()).toEqual({
      done: true,
    });
    expect(types(await getRun(runId))).toEqual([
      "workflow_created",
      "step_started",
      "step_completed",
      "workflow_completed",
    ]);
  });

  it("answers {done:false} for a run waiting out its retry backoff", async () => {
    const { runId } = await startRun("patient", null);
    await vi.waitFor(async () => expect(await lastEventType(runId)).toBe("step_failed"));
    const response = await call("POST", `/__workflow/${encodeURIComponent(runId)}/execute`);
    expect(await response.json()).toEqual({ done: false });
    expect(types(await getRun(runId))).toEqual(["workflow_created", "step_started", "step_failed"]);
  });

  it.each([
    { name: "well-formed, unknown in its actor", id: () => `${env.WORKFLOW_RUNS.idFromName("x")}.zzzzzzzzzzzz` },
    { name: "64 hex digits of no actor", id: () => `${"0".repeat(64)}.zzzzzzzzzzzz` },
    { name: "not a run id", id: () => "run_1" },
  ])("answers 404 for a run id $name", async ({ id }) => {
    await expectError(await call("POST", `/__workflow/${encodeURIComponent(id())}/execute`), 404, "not_found");
  });
});

describe("POST /__workflow/runs/:runId/events and /cancel (beyond the spec)", () => {
  const post = (path: string, body: unknown, options: Call = {}) =>
    call("POST", path, { body: typeof body === "string" ? body : JSON.stringify(body), ...options });

  async function waitingRun(): Promise<string> {
    const { runId } = await startRun("approval", null);
    await vi.waitFor(async () => expect((await getRun(runId)).waitingFor).toEqual({ name: "approval" }), {
      timeout: 5000,
      interval: 10,
    });
    return runId;
  }

  it("events: 202 { accepted: true }; the waiting run continues with the event as ctx.event", async () => {
    const runId = await waitingRun();
    const response = await post(`/__workflow/runs/${runId}/events`, { name: "approval", payload: { by: "ada" } });
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ accepted: true });
    expect(await waitUntilTerminal(runId)).toMatchObject({
      status: "completed",
      result: { name: "approval", payload: { by: "ada" } },
    });
    await expectError(await post(`/__workflow/runs/${runId}/events`, { name: "approval" }), 409, "conflict");
  });

  it.each([
    { name: "malformed JSON", body: '{"name":', status: 400, code: "malformed_json" },
    { name: "an empty body", body: "", status: 400, code: "malformed_json" },
    { name: "no name", body: JSON.stringify({ payload: 1 }), status: 400, code: "invalid_input" },
    { name: "a numeric name", body: JSON.stringify({ name: 7 }), status: 400, code: "invalid_input" },
    { name: "a name with a newline", body: JSON.stringify({ name: "a\nb" }), status: 400, code: "invalid_input" },
    // The event's JSON is never larger than the body, which the entry wrapper caps at 1 MiB before it checks
    // the caller (refusing more with its usual 404): the event limit is enforced on the way in.
    {
      name: "a payload over the 1 MiB event limit",
      body: JSON.stringify({ name: "approval", payload: "x".repeat(1024 * 1024) }),
      status: 404,
      code: "not_found",
    },
  ])("events: $status ($code) for $name, and nothing is appended", async ({ body, status, code }) => {
    const runId = await waitingRun();
    await expectError(await post(`/__workflow/runs/${runId}/events`, body), status, code);
    expect(types(await getRun(runId))).toEqual(["workflow_created", "step_started", "step_completed"]);
  });

  it("cancel: 200 { run } with status cancelled; again → 409; the run's result is settled", async () => {
    const runId = await waitingRun();
    const response = await post(`/__workflow/runs/${runId}/cancel`, { reason: "no longer needed" });
    expect(response.status).toBe(200);
    const { run } = (await response.json()) as { run: WorkflowRunView };
    expect(run).toMatchObject({ id: runId, status: "cancelled" });
    expect(run.events.at(-1)).toMatchObject({ type: "workflow_cancelled", payload: { reason: "no longer needed" } });
    await expectError(await post(`/__workflow/runs/${runId}/cancel`, {}), 409, "conflict");
    await expectError(await post(`/__workflow/runs/${runId}/events`, { name: "approval" }), 409, "conflict");
    const listed = (await (await call("GET", "/__workflow/runs?status=cancelled")).json()) as RunListPage;
    expect(listed.runs.map((r) => r.id)).toContain(runId);
  });

  it("cancel: an empty body is allowed; a reason that is not a string or malformed JSON is refused, nothing appended", async () => {
    const runId = await waitingRun();
    await expectError(await post(`/__workflow/runs/${runId}/cancel`, { reason: 7 }), 400, "invalid_input");
    await expectError(await post(`/__workflow/runs/${runId}/cancel`, "{"), 400, "malformed_json");
    await expectError(
      await post(`/__workflow/runs/${runId}/cancel`, JSON.stringify({ reason: "x".repeat(70_000) })),
      413,
      "payload_too_large",
    );
    expect((await getRun(runId)).status).toBe("running");
    const response = await call("POST", `/__workflow/runs/${runId}/cancel`);
    expect(response.status).toBe(200);
    expect((await getRun(runId)).status).toBe("cancelled");
  });

  it.each(["/cancel", "/events"])(
    "%s answers 404 for a run that does not exist, whatever shape its id has",
    async (what) => {
      const body = { name: "approval" };
      for (const runId of [
        "nope",
        `${"a".repeat(64)}.zzzzzzzzzzzz`,
        `${env.WORKFLOW_RUNS.newUniqueId()}.zzzzzzzzzzzz`,
        "%E0%A4%A",
      ]) {
        await expectError(await post(`/__workflow/runs/${runId}${what}`, body), 404, "not_found");
      }
    },
  );
});

describe("the workflow routes answer only the platform", () => {
  const denied: {
    name: string;
    token: (method: string, path: string, body: string | null) => Promise<string | null>;
  }[] = [
    { name: "no token", token: async () => null },
    {
      name: "a forged signature",
      token: async () => `${PROJECT_ID}.${Math.floor(Date.now() / 1000)}.${"A".repeat(43)}`,
    },
    {
      name: "another secret",
      token: (method, path, body) =>
        signRequestToken("internal", PROJECT_ID, OTHER_SECRET, { method, pathAndQuery: path, body }),
    },
    {
      name: "an identity token",
      token: (method, path, body) =>
        signRequestToken("identity", PROJECT_ID, SECRET, { method, pathAndQuery: path, body }),
    },
    {
      name: "a token for another path",
      token: (method, _path, body) =>
        signRequestToken("internal", PROJECT_ID, SECRET, { method, pathAndQuery: "/__cron/__workflow-recovery", body }),
    },
  ];

  it.each(denied)("POST /__workflow/start with $name → 404 and nothing starts", async ({ token }) => {
    const body = JSON.stringify({ name: "greet", data: { name: "Eve" } });
    const response = await start(body, { token: await token("POST", "/__workflow/start", body) });
    const error = await expectError(response, 404, "not_found");
    expect(error.error.message).toBe("Not found.");
    expect(await (await call("GET", "/__workflow/runs")).json()).toEqual({ runs: [] });
    expect(userCodeCalls).toBe(0);
  });

  it.each(denied)(
    "GET /__workflow/runs/:id and POST /__workflow/:runId/execute with $name → 404, the run untouched",
    async ({ token }) => {
      const { runId } = await startRun("patient", null);
      await vi.waitFor(async () => expect(await lastEventType(runId)).toBe("step_failed"));
      const runPath = `/__workflow/runs/${runId}`;
      await expectError(await call("GET", runPath, { token: await token("GET", runPath, null) }), 404, "not_found");
      const executePath = `/__workflow/${runId}/execute`;
      await expectError(
        await call("POST", executePath, { token: await token("POST", executePath, null) }),
        404,
        "not_found",
      );
      await expectError(
        await call("GET", "/__workflow/runs", { token: await token("GET", "/__workflow/runs", null) }),
        404,
        "not_found",
      );
      expect(types(await getRun(runId))).toEqual(["workflow_created", "step_started", "step_failed"]);
      expect(userCodeCalls).toBe(0);
    },
  );

  it.each(denied)(
    "POST /__workflow/runs/:id/cancel and /events with $name → 404, the run untouched",
    async ({ token }) => {
      const { runId } = await startRun("approval", null);
      await vi.waitFor(async () => expect(await lastEventType(runId)).toBe("step_completed"));
      for (const [path, body] of [
        [`/__workflow/runs/${runId}/cancel`, JSON.stringify({ reason: "forged" })],
        [`/__workflow/runs/${runId}/events`, JSON.stringify({ name: "approval", payload: "forged" })],
      ] as const) {
        await expectError(await call("POST", path, { body, token: await token("POST", path, body) }), 404, "not_found");
      }
      // A valid token replayed with another body (the signature covers it) is refused too.
      const path = `/__workflow/runs/${runId}/events`;
      const signed = await signRequestToken("internal", PROJECT_ID, SECRET, {
        method: "POST",
        pathAndQuery: path,
        body: JSON.stringify({ name: "other" }),
      });
      await expectError(
        await call("POST", path, { body: JSON.stringify({ name: "approval" }), token: signed }),
        404,
        "not_found",
      );
      expect(types(await getRun(runId))).toEqual(["workflow_created", "step_started", "step_completed"]);
      expect(userCodeCalls).toBe(0);
    },
  );

  it("user code still answers its own routes", async () => {
    const response = await worker.fetch!(
      new Request(`${ORIGIN}/hello`) as Request<unknown, IncomingRequestCfProperties>,
      projectEnv,
      createExecutionContext(),
    );
    expect(await response.text()).toBe("hello from user code");
  });
});

describe("POST /__cron/__workflow-recovery (registered by the first workflow() call)", () => {
  it("sweeps the project's active runs through the index and answers Re-enqueued N workflow(s)", async () => {
    // A run whose creation was written but whose first step never started (stuck_created).
    const actor = env.WORKFLOW_RUNS.get(env.WORKFLOW_RUNS.idFromName("stuck-1"));
    const runId = `${actor.id}.stuck0000001`;
    const summary = await runInDurableObject(actor, (_instance, state) => {
      const store = createSqlEventStore(durableObjectSql(state.storage));
      store.createRunIfNoActive({
        runId,
        workflowId: "stuck-1",
        seq: 1,
        type: "workflow_created",
        payload: { workflowName: "greet", writes: { data: { name: "Cy" } } },
        at: Date.now() - 60_000,
      });
      return store.getReport(runId)!;
    });
    await runIndexOf(projectEnv).record([summary]);

    const response = await call("POST", "/__cron/__workflow-recovery");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ cron: "__workflow-recovery", output: "Re-enqueued 1 workflow(s)" });
    expect(await waitUntilTerminal(runId)).toMatchObject({ status: "completed", result: { text: "hello Cy" } });
    expect(await (await call("POST", "/__cron/__workflow-recovery")).json()).toEqual({
      cron: "__workflow-recovery",
      output: "Re-enqueued 0 workflow(s)",
    });
  });
});

describe("the queue path: API consumer → dispatcher → project worker → run actor", () => {
  /** A D1 project, the project worker wrapped with that project's secret and id, and a dispatcher that reaches it. */
  async function deployedProject() {
    const { row } = await userWithProject("ada@example.com", "shop");
    projectEnv = projectEnvFor(row.id, row.worker_secret);
    const reached: { method: string; path: string }[] = [];
    const dispatcher: Dispatcher = {
      get(scriptName) {
        if (scriptName !== row.script_name) return null;
        return {
          async fetch(input: RequestInfo | URL, init?: RequestInit) {
            const request = new Request(input, init);
            reached.push({ method: request.method, path: new URL(request.url).pathname });
            return worker.fetch!(
              request as Request<unknown, IncomingRequestCfProperties>,
              projectEnv,
              createExecutionContext(),
            );
          },
        } as unknown as Fetcher;
      },
    };
    return { row, dispatcher, reached };
  }

  async function inFlightRows() {
    const { results } = await apiHarness()
      .env.DB.prepare("SELECT run_id, continuations FROM workflow_executions_in_flight")
      .all<{ run_id: string; continuations: number }>();
    return results;
  }

  async function consume(dispatcher: Dispatcher, body: WorkflowExecuteMessage) {
    const harness = apiHarness();
    const batch = createMessageBatch<WorkflowExecuteMessage>("workflow-execute", [
      { id: "m1", timestamp: new Date(), attempts: 1, body },
    ]);
    const ctx = createExecutionContext();
    await consumeWorkflowQueue(batch, harness.env, dispatcher);
    return { result: await getQueueResult(batch, ctx), sent: harness.queue.sent };
  }

  it("the consumer calls the run's execute route, which drives the run to its end; the message is acked, nothing re-enqueued", async () => {
    const { row, dispatcher, reached } = await deployedProject();
    gateFor("queued-1");
    const runId = (await startRun("gated", { via: "queue" }, "queued-1")).runId;
    await vi.waitFor(async () => expect(await lastEventType(runId)).toBe("step_started"));

    const consuming = consume(dispatcher, { runId, scriptName: row.script_name });
    await vi.waitFor(() => expect(reached).toEqual([{ method: "POST", path: `/__workflow/${runId}/execute` }]));
    gateFor("queued-1").open();
    const { result, sent } = await consuming;
    expect(result.explicitAcks).toEqual(["m1"]);
    expect(result.retryMessages).toEqual([]);
    expect(sent).toEqual([]);
    expect(await getRun(runId)).toMatchObject({ status: "completed", result: { via: "queue" } });
  });

  describe("with a clock the test moves", () => {
    beforeEach(() => {
      clockOffset = 0;
      workflowRunHost.clock = testClock;
    });
    afterEach(() => {
      workflowRunHost.clock = systemClock;
    });

    const actorOf = (runId: string) => env.WORKFLOW_RUNS.get(env.WORKFLOW_RUNS.idFromString(runId.split(".")[0]!));

    it("a run waiting out its retry backoff is not re-enqueued (its row released); its alarm still completes it", async () => {
      const { row, dispatcher } = await deployedProject();
      const runId = (await startRun("flaky", null)).runId;
      await vi.waitFor(async () => expect(await lastEventType(runId)).toBe("step_failed"));
      const { result, sent } = await consume(dispatcher, { runId, scriptName: row.script_name });
      expect(result.explicitAcks).toEqual(["m1"]);
      expect(sent).toEqual([]);
      expect(await inFlightRows()).toEqual([]);

      clockOffset += 61_000;
      expect(await runDurableObjectAlarm(actorOf(runId))).toBe(true);
      expect(await waitUntilTerminal(runId)).toMatchObject({ status: "completed", result: { attempt: 2 } });
    });

    it("a run that exhausts its step-loop budget answers {done:false, continue:true} and is re-enqueued once", async () => {
      const { row, dispatcher, reached } = await deployedProject();
      gateFor("marathon-1");
      const runId = (await startRun("marathon", null, "marathon-1")).runId;
      await vi.waitFor(async () => expect(await lastEventType(runId)).toBe("step_started"));
      const harness = apiHarness();
      await harness.env.DB.prepare(
        "INSERT INTO workflow_executions_in_flight (script_name, run_id, enqueued_at) VALUES (?, ?, ?)",
      )
        .bind(row.script_name, runId, Date.now())
        .run();

      const consuming = consume(dispatcher, { runId, scriptName: row.script_name });
      await vi.waitFor(() => expect(reached).toHaveLength(1));
      gateFor("marathon-1").open();
      const { result, sent } = await consuming;
      expect(result.explicitAcks).toEqual(["m1"]);
      expect(sent.map((s) => s.body)).toEqual([{ runId, scriptName: row.script_name }]);
      expect(await inFlightRows()).toEqual([{ run_id: runId, continuations: 1 }]);

      // The re-enqueued message (or the actor's own alarm) finishes the run; then the row goes.
      const again = await consume(dispatcher, { runId, scriptName: row.script_name });
      expect(again.sent).toEqual([]);
      expect(await inFlightRows()).toEqual([]);
      expect(await waitUntilTerminal(runId)).toMatchObject({ status: "completed", result: "finished" });
    });

    it("execute answers {done:false, continue:true} only for a spent budget", async () => {
      gateFor("marathon-2");
      const { runId } = await startRun("marathon", null, "marathon-2");
      await vi.waitFor(async () => expect(await lastEventType(runId)).toBe("step_started"));
      const executing = call("POST", `/__workflow/${encodeURIComponent(runId)}/execute`);
      gateFor("marathon-2").open();
      expect(await (await executing).json()).toEqual({ done: false, continue: true });
      expect(await (await call("POST", `/__workflow/${encodeURIComponent(runId)}/execute`)).json()).toEqual({
        done: true,
      });
    });
  });

  it.each([
    { name: "unknown in its actor", id: () => `${env.WORKFLOW_RUNS.idFromName("x")}.zzzzzzzzzzzz` },
    {
      name: "of no actor (64 hex digits of another namespace)",
      id: () => `${env.WORKFLOW_RUN_INDEX.idFromName("index")}.zzzzzzzzzzzz`,
    },
  ])("drops (acks, no retry) a message for a run $name: the worker answers 404", async ({ id }) => {
    const { row, dispatcher, reached } = await deployedProject();
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const { result, sent } = await consume(dispatcher, { runId: id(), scriptName: row.script_name });
    expect(reached).toHaveLength(1);
    expect(result.explicitAcks).toEqual(["m1"]);
    expect(result.retryMessages).toEqual([]);
    expect(sent).toEqual([]);
    expect(errors).toHaveBeenCalledWith(expect.stringContaining("does not know run"));
  });

  it("a worker holding another project's secret refuses the platform's call; the run is not driven", async () => {
    const { row, dispatcher } = await deployedProject();
    const runId = (await startRun("patient", null)).runId;
    await vi.waitFor(async () => expect(await lastEventType(runId)).toBe("step_failed"));
    projectEnv = projectEnvFor(row.id, OTHER_SECRET);
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const { result, sent } = await consume(dispatcher, { runId, scriptName: row.script_name });
    expect(result.explicitAcks).toEqual(["m1"]);
    expect(sent).toEqual([]);
    expect(errors).toHaveBeenCalled();
    expect(await lastEventType(runId)).toBe("step_failed");
  });
});
