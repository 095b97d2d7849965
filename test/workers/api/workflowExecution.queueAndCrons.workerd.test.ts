import {
  createExecutionContext,
  createMessageBatch,
  createScheduledController,
  getQueueResult,
  waitOnExecutionContext,
} from "cloudflare:test";
import { beforeAll, describe, expect, it, vi } from "vitest";
import api from "#src/workers/api/index.ts";
import type { WorkflowExecuteMessage } from "#src/workers/api/env.ts";
import { cronIsDue, runDueCrons } from "#src/workers/api/projectCrons.ts";
import { MAX_CONTINUATIONS } from "#src/workers/api/workflowExecution.ts";
import { claimExecutionInFlight } from "#src/workers/db/workflowExecutionsInFlight.ts";
import { resolveDispatcher } from "#src/workers/dispatch/dispatcher.ts";
import { INTERNAL_HEADER, pathAndQueryOf, verifyRequestToken } from "#src/core/requestToken.ts";
import { createPlatformWorker } from "#src/runtime/entry/createPlatformWorker.ts";
import { platformRuntime } from "#src/runtime/entry/platformRuntime.ts";
import type { ProjectRow } from "#src/workers/db/projectsTable.ts";
import {
  apiHarness,
  createProject,
  fakeDispatcher,
  projectRow,
  putCrons,
  userWithProject,
  type DispatchedCall,
  type ProjectWorkerHandler,
  columnOf,
} from "#test/support/workerd/index.ts";

/** Verifies that a call reached the project worker as the platform: a valid `internal` token for `row`. */
async function expectPlatformCall(call: DispatchedCall, row: ProjectRow, method: string, path: string) {
  expect(call.scriptName).toBe(row.script_name);
  expect(call.method).toBe(method);
  expect(call.url.pathname).toBe(path);
  const token = call.headers.get(INTERNAL_HEADER);
  expect(token, "X-Platform-Internal header").toBeTruthy();
  const check = await verifyRequestToken(
    "internal",
    token,
    { method: call.method, pathAndQuery: pathAndQueryOf(call.url), body: call.body },
    { lookupSecret: (id) => (id === String(row.id) ? row.worker_secret : null) },
  );
  expect(check).toEqual({ ok: true, projectId: String(row.id) });
  // The same token must not pass as an identity token (purpose separation).
  const asIdentity = await verifyRequestToken(
    "identity",
    token,
    { method: call.method, pathAndQuery: pathAndQueryOf(call.url), body: call.body },
    { lookupSecret: () => row.worker_secret },
  );
  expect(asIdentity).toEqual({ ok: false, reason: "bad_signature" });
}

function message(id: string, body: WorkflowExecuteMessage, attempts = 1) {
  return { id, timestamp: new Date(1_700_000_000_000), attempts, body };
}

async function consume(messages: ReturnType<typeof message>[], handler: ProjectWorkerHandler, deployed?: string[]) {
  const dispatcher = fakeDispatcher(handler, deployed ? { deployed } : {});
  const harness = apiHarness({ dispatcher });
  const batch = createMessageBatch<WorkflowExecuteMessage>("workflow-execute", messages);
  const ctx = createExecutionContext();
  await api.queue(batch, harness.env);
  const result = await getQueueResult(batch, ctx);
  return { result, calls: dispatcher.calls, sent: harness.queue.sent };
}

const json = (value: unknown, status = 200) => Response.json(value, { status });

/** The run's `workflow_executions_in_flight` row as its continuation count ([] when it has none). */
const inFlightContinuations = (runId: string) =>
  columnOf<number>("SELECT continuations FROM workflow_executions_in_flight WHERE run_id = ?", runId);

describe("workflow queue consumer", () => {
  it("calls POST /__workflow/{runId}/execute with a valid internal token and acks on {done:true}", async () => {
    const { row } = await userWithProject("ada@example.com", "shop");
    const { result, calls, sent } = await consume([message("m1", { runId: "run_1", scriptName: "proj-shop" })], () =>
      json({ done: true }),
    );
    expect(calls).toHaveLength(1);
    await expectPlatformCall(calls[0]!, row, "POST", "/__workflow/run_1/execute");
    expect(result.explicitAcks).toEqual(["m1"]);
    expect(result.retryMessages).toEqual([]);
    expect(sent).toEqual([]);
  });

  it.each([
    { runId: "wf:order-42.run_7", path: "/__workflow/wf%3Aorder-42.run_7/execute" },
    { runId: "0b4f2f5e-4c1e-4d39-9f6b-2b8d1f0b9c3a", path: "/__workflow/0b4f2f5e-4c1e-4d39-9f6b-2b8d1f0b9c3a/execute" },
    { runId: "r".repeat(200), path: `/__workflow/${"r".repeat(200)}/execute` },
  ])("signs exactly the path the worker receives (runId $runId)", async ({ runId, path }) => {
    const { row } = await userWithProject("ada@example.com", "shop");
    const { calls, result } = await consume([message("m1", { runId, scriptName: "proj-shop" })], () =>
      json({ done: true }),
    );
    await expectPlatformCall(calls[0]!, row, "POST", path);
    expect(result.explicitAcks).toEqual(["m1"]);
  });

  // Only a run whose step-loop budget ran out is re-enqueued; a waiting run's actor wakes it.
  it.each([
    { name: "{done:true}", answer: { done: true }, requeued: false },
    { name: "{done:false} (waiting for its alarm)", answer: { done: false }, requeued: false },
    { name: "{done:false, continue:false}", answer: { done: false, continue: false }, requeued: false },
    { name: "{done:false, continue:true} (budget exhausted)", answer: { done: false, continue: true }, requeued: true },
  ])("on $name acks and re-enqueues: $requeued", async ({ answer, requeued }) => {
    await userWithProject("ada@example.com", "shop");
    const body = { runId: "run_1", scriptName: "proj-shop" };
    await claimExecutionInFlight(apiHarness().env.DB, body.scriptName, body.runId, Date.now());
    const { result, sent } = await consume([message("m1", body)], () => json(answer));
    expect(result.explicitAcks).toEqual(["m1"]);
    expect(result.retryMessages).toEqual([]);
    expect(sent.map((s) => s.body)).toEqual(requeued ? [body] : []);
    if (requeued) expect(sent[0]!.options?.delaySeconds).toBeGreaterThanOrEqual(1);
    // The run's row stays while its message is re-enqueued, and goes with it otherwise.
    expect(await inFlightContinuations(body.runId)).toEqual(requeued ? [1] : []);
  });

  it(`re-enqueues a run that keeps exhausting its budget at most ${MAX_CONTINUATIONS} times, then lets its actor carry on`, async () => {
    await userWithProject("ada@example.com", "shop");
    const body = { runId: "run_1", scriptName: "proj-shop" };
    let requeued = 0;
    for (let i = 0; i < MAX_CONTINUATIONS + 5; i++) {
      const errors = vi.spyOn(console, "error").mockImplementation(() => {});
      const { sent } = await consume([message(`m${i}`, body)], () => json({ done: false, continue: true }));
      errors.mockRestore();
      requeued += sent.length;
      if (sent.length === 0) break;
    }
    expect(requeued).toBe(MAX_CONTINUATIONS);
    expect(await inFlightContinuations(body.runId)).toEqual([]);
  });

  it("keeps the run's row while the queue retries a failed call, and drops it with a message it drops", async () => {
    await userWithProject("ada@example.com", "shop");
    const { env } = apiHarness();
    for (const runId of ["boom", "gone"]) await claimExecutionInFlight(env.DB, "proj-shop", runId, Date.now());
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    await consume(
      [
        message("m-boom", { runId: "boom", scriptName: "proj-shop" }),
        message("m-gone", { runId: "gone", scriptName: "proj-shop" }),
      ],
      (request) =>
        new URL(request.url).pathname.includes("boom")
          ? json({ error: { code: "internal", message: "x" } }, 500)
          : json({ error: { code: "not_found", message: "Not found." } }, 404),
    );
    errors.mockRestore();
    expect(await inFlightContinuations("boom")).toEqual([0]);
    expect(await inFlightContinuations("gone")).toEqual([]);
  });

  it("acks and drops a message for a script no project owns, without calling any worker", async () => {
    await userWithProject("ada@example.com", "shop");
    const { result, calls, sent } = await consume([message("m1", { runId: "run_1", scriptName: "proj-gone" })], () =>
      json({ done: false }),
    );
    expect(calls).toEqual([]);
    expect(result.explicitAcks).toEqual(["m1"]);
    expect(result.retryMessages).toEqual([]);
    expect(sent).toEqual([]);
  });

  it("acks and drops a run the project worker does not know (404)", async () => {
    await userWithProject("ada@example.com", "shop");
    const { result, sent } = await consume([message("m1", { runId: "run_1", scriptName: "proj-shop" })], () =>
      json({ error: { code: "not_found", message: "Not found." } }, 404),
    );
    expect(result.explicitAcks).toEqual(["m1"]);
    expect(result.retryMessages).toEqual([]);
    expect(sent).toEqual([]);
  });

  it.each([
    { name: "a 500", handler: () => json({ error: { code: "internal", message: "Internal error" } }, 500) },
    { name: "a 503", handler: () => new Response("busy", { status: 503 }) },
    { name: "a 200 that is not JSON", handler: () => new Response("<html>") },
    {
      name: "a thrown fetch",
      handler: () => {
        throw new Error("connection reset");
      },
    },
  ])("retries (does not ack, does not re-enqueue) on $name", async ({ handler }) => {
    await userWithProject("ada@example.com", "shop");
    const { result, sent } = await consume([message("m1", { runId: "run_1", scriptName: "proj-shop" })], handler);
    expect(result.explicitAcks).toEqual([]);
    expect(result.retryMessages).toHaveLength(1);
    expect(result.retryMessages[0]!.msgId).toBe("m1");
    expect(sent).toEqual([]);
  });

  it("retries when the project's worker is not deployed in the dispatch namespace", async () => {
    await userWithProject("ada@example.com", "shop");
    const { result, calls } = await consume(
      [message("m1", { runId: "run_1", scriptName: "proj-shop" })],
      () => json({ done: true }),
      ["proj-something-else"],
    );
    expect(calls).toEqual([]);
    expect(result.explicitAcks).toEqual([]);
    expect(result.retryMessages.map((r) => r.msgId)).toEqual(["m1"]);
  });

  it("handles each message of a mixed batch on its own, each with its own project's token", async () => {
    const { user, row: shop } = await userWithProject("ada@example.com", "shop");
    await createProject(user.token, "blog");
    const blog = await projectRow("blog");
    const outcomes: Record<string, Response | (() => Response)> = {
      "/__workflow/done/execute": json({ done: true }),
      "/__workflow/more/execute": json({ done: false, continue: true }),
      "/__workflow/boom/execute": json({ error: { code: "internal", message: "x" } }, 500),
    };
    const { result, calls, sent } = await consume(
      [
        message("m-done", { runId: "done", scriptName: "proj-shop" }),
        message("m-more", { runId: "more", scriptName: "proj-blog" }),
        message("m-gone", { runId: "gone", scriptName: "proj-nope" }),
        message("m-boom", { runId: "boom", scriptName: "proj-shop" }),
      ],
      (request) => (outcomes[new URL(request.url).pathname] as Response).clone(),
    );
    expect(result.explicitAcks.sort()).toEqual(["m-done", "m-gone", "m-more"]);
    expect(result.retryMessages.map((r) => r.msgId)).toEqual(["m-boom"]);
    expect(sent.map((s) => s.body)).toEqual([{ runId: "more", scriptName: "proj-blog" }]);
    expect(calls.map((c) => `${c.scriptName} ${c.url.pathname}`)).toEqual([
      "proj-shop /__workflow/done/execute",
      "proj-blog /__workflow/more/execute",
      "proj-shop /__workflow/boom/execute",
    ]);
    await expectPlatformCall(calls[0]!, shop, "POST", "/__workflow/done/execute");
    await expectPlatformCall(calls[1]!, blog, "POST", "/__workflow/more/execute");
    // Shop's token does not verify as blog's.
    const crossCheck = await verifyRequestToken(
      "internal",
      calls[0]!.headers.get(INTERNAL_HEADER),
      { method: "POST", pathAndQuery: "/__workflow/done/execute", body: null },
      { lookupSecret: () => blog.worker_secret },
    );
    expect(crossCheck.ok).toBe(false);
  });
});

describe("scheduled cron runner", () => {
  const CRONS = [
    { name: "__workflow-recovery", schedule: "* * * * *" },
    { name: "hourly", schedule: "0 * * * *" },
  ];

  async function runScheduled(scheduledTime: number, handler?: ProjectWorkerHandler, deployed?: string[]) {
    const dispatcher = fakeDispatcher(
      handler ?? (() => json({ cron: "x", output: "ok" })),
      deployed ? { deployed } : {},
    );
    const harness = apiHarness({ dispatcher });
    const ctx = createExecutionContext();
    await api.scheduled(createScheduledController({ scheduledTime, cron: "* * * * *" }), harness.env, ctx);
    await waitOnExecutionContext(ctx);
    return dispatcher.calls;
  }

  it.each([
    { at: "10:07:00", time: Date.UTC(2026, 10, 22, 10, 7, 0), expected: ["/__cron/__workflow-recovery"] },
    {
      at: "10:07:42 (seconds ignored)",
      time: Date.UTC(2026, 10, 22, 10, 7, 42),
      expected: ["/__cron/__workflow-recovery"],
    },
    {
      at: "11:00:00",
      time: Date.UTC(2026, 10, 22, 11, 0, 0),
      expected: ["/__cron/__workflow-recovery", "/__cron/hourly"],
    },
    {
      at: "11:00:59",
      time: Date.UTC(2026, 10, 22, 11, 0, 59),
      expected: ["/__cron/__workflow-recovery", "/__cron/hourly"],
    },
    { at: "11:01:00", time: Date.UTC(2026, 10, 22, 11, 1, 0), expected: ["/__cron/__workflow-recovery"] },
  ])("at $at UTC calls exactly the due crons with valid internal tokens", async ({ time, expected }) => {
    const { user, row } = await userWithProject("ada@example.com", "shop");
    await putCrons(user.token, "shop", CRONS);
    const calls = await runScheduled(time);
    expect(calls.map((c) => c.url.pathname).sort()).toEqual(expected);
    for (const call of calls) await expectPlatformCall(call, row, "POST", call.url.pathname);
  });

  it("runs every project's due crons, each with its own secret, and none for projects without crons", async () => {
    const { user, row: shop } = await userWithProject("ada@example.com", "shop");
    await createProject(user.token, "blog");
    await createProject(user.token, "idle");
    const blog = await projectRow("blog");
    await putCrons(user.token, "shop", CRONS);
    await putCrons(user.token, "blog", [
      { name: "daily", schedule: "0 0 * * *" },
      { name: "quarter", schedule: "*/15 * * * *" },
    ]);

    const calls = await runScheduled(Date.UTC(2026, 10, 22, 0, 0, 5));
    const seen = calls.map((c) => `${c.scriptName} ${c.url.pathname}`).sort();
    expect(seen).toEqual([
      "proj-blog /__cron/daily",
      "proj-blog /__cron/quarter",
      "proj-shop /__cron/__workflow-recovery",
      "proj-shop /__cron/hourly",
    ]);
    for (const call of calls)
      await expectPlatformCall(call, call.scriptName === "proj-shop" ? shop : blog, "POST", call.url.pathname);
  });

  it("calls nothing when no cron is registered", async () => {
    await userWithProject("ada@example.com", "shop");
    expect(await runScheduled(Date.UTC(2026, 10, 22, 11, 0, 0))).toEqual([]);
  });

  it("keeps going when one project's worker fails or is not deployed, and reports each outcome", async () => {
    const { user } = await userWithProject("ada@example.com", "shop");
    await createProject(user.token, "blog");
    await createProject(user.token, "gone");
    for (const slug of ["shop", "blog", "gone"])
      await putCrons(user.token, slug, [{ name: "tick", schedule: "* * * * *" }]);
    const dispatcher = fakeDispatcher(
      (_request, script) => {
        if (script === "proj-blog") throw new Error("boom");
        return json({ cron: "tick", output: "ok" });
      },
      { deployed: ["proj-shop", "proj-blog"] },
    );
    const { env } = apiHarness({ dispatcher });
    const report = await runDueCrons(env.DB, resolveDispatcher(env), Date.UTC(2026, 10, 22, 11, 0, 0));
    expect(
      report
        .map(({ project, cron, status }) => ({ project, cron, status }))
        .sort((x, y) => x.project.localeCompare(y.project)),
    ).toEqual([
      { project: "blog", cron: "tick", status: "error" },
      { project: "gone", cron: "tick", status: 502 },
      { project: "shop", cron: "tick", status: 200 },
    ]);
  });

  it.each([
    { schedule: "* * * * *", at: [2026, 10, 22, 10, 7], due: true },
    { schedule: "0 * * * *", at: [2026, 10, 22, 10, 7], due: false },
    { schedule: "0 * * * *", at: [2026, 10, 22, 11, 0], due: true },
    { schedule: "*/15 * * * *", at: [2026, 10, 22, 10, 45], due: true },
    { schedule: "*/15 * * * *", at: [2026, 10, 22, 10, 46], due: false },
    { schedule: "30 3 * * *", at: [2026, 10, 22, 3, 30], due: true },
    { schedule: "30 3 * * *", at: [2026, 10, 22, 4, 30], due: false },
    // 2026-11-23 is a Monday.
    { schedule: "0 9 * * 1", at: [2026, 10, 23, 9, 0], due: true },
    { schedule: "0 9 * * 1", at: [2026, 10, 22, 9, 0], due: false },
    { schedule: "0 0 1 * *", at: [2026, 11, 1, 0, 0], due: true },
  ] as const)("cronIsDue($schedule) at $at (UTC) is $due", ({ schedule, at, due }) => {
    const [y, mo, d, h, mi] = at;
    expect(cronIsDue(schedule, Date.UTC(y, mo, d, h, mi, 30))).toBe(due);
  });
});

describe("API worker → real entry wrapper (tokens accepted end to end)", () => {
  const ran: string[] = [];

  beforeAll(() => {
    platformRuntime.registerCron({
      name: "e2e-tick",
      schedule: "* * * * *",
      run: async () => {
        ran.push("e2e-tick");
        return "ticked";
      },
    });
    platformRuntime.registerInternalRoute("__workflow", async (request, _env, _ctx, rest) => {
      ran.push(`workflow ${request.method} ${rest}`);
      return Response.json({ done: true });
    });
  });

  function projectWorkerFor(row: ProjectRow, userFetch: () => Response) {
    const worker = createPlatformWorker({ fetch: userFetch });
    const projectEnv = { PLATFORM_WORKER_SECRET: row.worker_secret, PLATFORM_PROJECT_ID: String(row.id) };
    return (request: Request) =>
      worker.fetch!(request as Request<unknown, IncomingRequestCfProperties>, projectEnv, createExecutionContext());
  }

  it("the queue consumer's call runs the worker's /__workflow route and the message is acked", async () => {
    ran.length = 0;
    const { row } = await userWithProject("ada@example.com", "shop");
    let userCodeCalls = 0;
    const callWorker = projectWorkerFor(row, () => {
      userCodeCalls++;
      return new Response("user");
    });
    const { result } = await consume([message("m1", { runId: "run_9", scriptName: "proj-shop" })], (request) =>
      callWorker(request),
    );
    expect(ran).toEqual(["workflow POST /run_9/execute"]);
    expect(userCodeCalls).toBe(0);
    expect(result.explicitAcks).toEqual(["m1"]);
  });

  it("the scheduler's call runs the registered cron in the project worker", async () => {
    ran.length = 0;
    const { user, row } = await userWithProject("ada@example.com", "shop");
    await putCrons(user.token, "shop", [{ name: "e2e-tick", schedule: "* * * * *" }]);
    const { env } = apiHarness({
      dispatcher: fakeDispatcher((request) => projectWorkerFor(row, () => new Response("user"))(request)),
    });
    const report = await runDueCrons(env.DB, resolveDispatcher(env), Date.now());
    expect(ran).toEqual(["e2e-tick"]);
    expect(report).toEqual([
      {
        project: "shop",
        cron: "e2e-tick",
        status: 200,
        // The cron's own words, as the scheduler's log line prints them (`cron shop/e2e-tick: 200 ticked`).
        output: "ticked",
      },
    ]);
  });

  it("another project's worker refuses the call (404) and the cron does not run", async () => {
    ran.length = 0;
    const { user, row } = await userWithProject("ada@example.com", "shop");
    await createProject(user.token, "blog");
    const blog = await projectRow("blog");
    await putCrons(user.token, "shop", [{ name: "e2e-tick", schedule: "* * * * *" }]);
    // The dispatcher (wrongly) routes shop's script to blog's worker.
    const { env } = apiHarness({
      dispatcher: fakeDispatcher((request) => projectWorkerFor(blog, () => new Response("user"))(request)),
    });
    const report = await runDueCrons(env.DB, resolveDispatcher(env), Date.now());
    expect(ran).toEqual([]);
    expect(report.map((r) => r.status)).toEqual([404]);
    expect(row.id).not.toBe(blog.id);
  });
});
