import { createExecutionContext } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import api from "#src/workers/api/index.ts";
import { IDENTITY_HEADER, signRequestToken, type TokenPurpose } from "#src/core/requestToken.ts";
import { EXECUTE_RATE } from "#src/workers/api/workflowExecution.ts";
import { IN_FLIGHT_STALE_MS } from "#src/workers/db/workflowExecutionsInFlight.ts";
import type { ProjectRow } from "#src/workers/db/projectsTable.ts";
import {
  API_ORIGIN,
  apiHarness,
  createProject,
  expectError,
  projectRow,
  streamOfText,
  userWithProject,
} from "#test/support/workerd/index.ts";

const PATH = "/internal/workflow/execute";

/** Two projects of two different users, with their secrets. */
async function twoProjects(): Promise<{ a: ProjectRow; b: ProjectRow }> {
  const { user } = await userWithProject("ada@example.com", "a-proj");
  await createProject(user.token, "b-proj");
  return { a: await projectRow("a-proj"), b: await projectRow("b-proj") };
}

interface Kick {
  /** Raw body sent; defaults to `{"runId":"run_1"}`. */
  body?: string | ReadableStream<Uint8Array>;
  /** Header value; `null` sends no header. */
  token?: string | null;
  headers?: Record<string, string>;
  path?: string;
  method?: string;
}

async function kick(kickOptions: Kick) {
  const harness = apiHarness();
  const method = kickOptions.method ?? "POST";
  const headers = new Headers(kickOptions.headers);
  if (kickOptions.token) headers.set(IDENTITY_HEADER, kickOptions.token);
  const request = new Request(API_ORIGIN + (kickOptions.path ?? PATH), {
    method,
    headers,
    body: kickOptions.body ?? JSON.stringify({ runId: "run_1" }),
  });
  const response = await api.fetch(request, harness.env, createExecutionContext());
  return { response, sent: harness.queue.sent, dispatched: harness.dispatcher.calls };
}

interface SignSpec {
  purpose?: TokenPurpose;
  projectId: string | number;
  secret: string;
  method?: string;
  path?: string;
  body: string;
  nowMS?: number;
}

function sign(spec: SignSpec): Promise<string> {
  return signRequestToken(
    spec.purpose ?? "identity",
    { method: spec.method ?? "POST", pathAndQuery: spec.path ?? PATH, body: spec.body },
    { projectId: spec.projectId, secret: spec.secret, nowMS: spec.nowMS ?? Date.now() },
  );
}

describe("POST /internal/workflow/execute", () => {
  it("enqueues exactly one message for the authenticated project's script (202)", async () => {
    const { a } = await twoProjects();
    const body = JSON.stringify({ runId: "run_01HZX" });
    const { response, sent, dispatched } = await kick({
      body,
      token: await sign({ projectId: a.id, secret: a.worker_secret, body }),
    });
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ queued: true, runId: "run_01HZX" });
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body).toEqual({ runId: "run_01HZX", scriptName: "proj-a-proj" });
    expect(dispatched).toHaveLength(0);
  });

  it("derives the script from the token, never from what the body claims", async () => {
    const { a, b } = await twoProjects();
    const body = JSON.stringify({ runId: "run_1", scriptName: b.script_name, projectId: b.id, slug: "b-proj" });
    const { response, sent } = await kick({
      body,
      token: await sign({ projectId: a.id, secret: a.worker_secret, body }),
    });
    expect(response.status).toBe(202);
    expect(sent.map((s) => s.body)).toEqual([{ runId: "run_1", scriptName: "proj-a-proj" }]);
  });

  it.each([
    { name: "run id with dots, colons, dashes", runId: "wf:order-42.run_7" },
    { name: "one character", runId: "r" },
    { name: "200 characters", runId: "r".repeat(200) },
    { name: "a UUID", runId: "0b4f2f5e-4c1e-4d39-9f6b-2b8d1f0b9c3a" },
  ])("accepts runId: $name", async ({ runId }) => {
    const { a } = await twoProjects();
    const body = JSON.stringify({ runId });
    const { response, sent } = await kick({
      body,
      token: await sign({ projectId: a.id, secret: a.worker_secret, body }),
    });
    expect(response.status).toBe(202);
    expect(sent.map((s) => s.body)).toEqual([{ runId, scriptName: "proj-a-proj" }]);
  });

  it.each([
    { name: "59 seconds old", offsetMs: -59_000 },
    { name: "59 seconds ahead (clock skew)", offsetMs: 59_000 },
  ])("accepts a token $name", async ({ offsetMs }) => {
    const { a } = await twoProjects();
    const body = JSON.stringify({ runId: "run_1" });
    const token = await sign({ projectId: a.id, secret: a.worker_secret, body, nowMS: Date.now() + offsetMs });
    const { response, sent } = await kick({ body, token });
    expect(response.status).toBe(202);
    expect(sent).toHaveLength(1);
  });

  const BODY = JSON.stringify({ runId: "run_1" });
  type Projects = { a: ProjectRow; b: ProjectRow };
  const authFailures: {
    name: string;
    token: (p: Projects) => Promise<string | null>;
    body?: string;
    message: RegExp;
  }[] = [
    { name: "missing header", token: async () => null, message: /Missing X-Platform-Identity/ },
    { name: "malformed: garbage", token: async () => "garbage", message: /Malformed/ },
    { name: "malformed: two parts", token: async () => "1.1700000000", message: /Malformed/ },
    {
      name: "malformed: short signature",
      token: async ({ a }) => `${a.id}.${Math.floor(Date.now() / 1000)}.abc`,
      message: /Malformed/,
    },
    {
      name: "malformed: extra part",
      token: async ({ a }) => (await sign({ projectId: a.id, secret: a.worker_secret, body: BODY })) + ".x",
      message: /Malformed/,
    },
    {
      name: "malformed: non-numeric project id",
      token: async ({ a }) =>
        (await sign({ projectId: a.id, secret: a.worker_secret, body: BODY })).replace(/^\d+/, "a"),
      message: /Malformed/,
    },
    {
      name: "expired (2 minutes old)",
      token: async ({ a }) =>
        sign({ projectId: a.id, secret: a.worker_secret, body: BODY, nowMS: Date.now() - 120_000 }),
      message: /expired/,
    },
    {
      name: "expired (just over 60 s old)",
      token: async ({ a }) =>
        sign({ projectId: a.id, secret: a.worker_secret, body: BODY, nowMS: Date.now() - 62_000 }),
      message: /expired/,
    },
    {
      name: "from the future beyond 60 s",
      token: async ({ a }) =>
        sign({ projectId: a.id, secret: a.worker_secret, body: BODY, nowMS: Date.now() + 90_000 }),
      message: /expired/,
    },
    {
      name: "signed with project B's secret but claiming A's id",
      token: async ({ a, b }) => sign({ projectId: a.id, secret: b.worker_secret, body: BODY }),
      message: /Invalid X-Platform-Identity/,
    },
    {
      name: "A's valid token with the id rewritten to B",
      token: async ({ a, b }) =>
        (await sign({ projectId: a.id, secret: a.worker_secret, body: BODY })).replace(/^\d+/, String(b.id)),
      message: /Invalid X-Platform-Identity/,
    },
    {
      name: "body altered after signing",
      token: async ({ a }) =>
        sign({ projectId: a.id, secret: a.worker_secret, body: JSON.stringify({ runId: "run_other" }) }),
      message: /Invalid X-Platform-Identity/,
    },
    {
      name: "body with extra whitespace after signing",
      token: async ({ a }) => sign({ projectId: a.id, secret: a.worker_secret, body: BODY }),
      body: BODY + " ",
      message: /Invalid X-Platform-Identity/,
    },
    {
      name: "signed for a different path",
      token: async ({ a }) =>
        sign({ projectId: a.id, secret: a.worker_secret, body: BODY, path: "/internal/workflow/other" }),
      message: /Invalid X-Platform-Identity/,
    },
    {
      name: "signed for the same path with a query",
      token: async ({ a }) => sign({ projectId: a.id, secret: a.worker_secret, body: BODY, path: `${PATH}?x=1` }),
      message: /Invalid X-Platform-Identity/,
    },
    {
      name: "signed for a different method",
      token: async ({ a }) => sign({ projectId: a.id, secret: a.worker_secret, body: BODY, method: "PUT" }),
      message: /Invalid X-Platform-Identity/,
    },
    {
      name: "timestamp bumped by one second",
      token: async ({ a }) => {
        const [id, ts, sig] = (await sign({ projectId: a.id, secret: a.worker_secret, body: BODY })).split(".");
        return `${id}.${Number(ts) - 1}.${sig}`;
      },
      message: /Invalid X-Platform-Identity/,
    },
    {
      name: "signature flipped",
      token: async ({ a }) => {
        const token = await sign({ projectId: a.id, secret: a.worker_secret, body: BODY });
        const [id, ts, sig] = token.split(".") as [string, string, string];
        return `${id}.${ts}.${sig[0] === "A" ? "B" : "A"}${sig.slice(1)}`;
      },
      message: /Invalid X-Platform-Identity/,
    },
    {
      name: "an internal (platform → worker) token instead of an identity token",
      token: async ({ a }) => sign({ purpose: "internal", projectId: a.id, secret: a.worker_secret, body: BODY }),
      message: /Invalid X-Platform-Identity/,
    },
    {
      name: "unknown project id",
      token: async ({ a }) => sign({ projectId: 999_999, secret: a.worker_secret, body: BODY }),
      message: /Invalid X-Platform-Identity/,
    },
    {
      name: "project id 0",
      token: async ({ a }) => sign({ projectId: 0, secret: a.worker_secret, body: BODY }),
      message: /Invalid X-Platform-Identity/,
    },
  ];

  it.each(authFailures)("rejects $name with 401 and enqueues nothing", async ({ token, body, message }) => {
    const projects = await twoProjects();
    const { response, sent } = await kick({ body: body ?? BODY, token: await token(projects) });
    const error = await expectError(response, 401, "unauthorized");
    expect(error.error.message).toMatch(message);
    expect(sent).toHaveLength(0);
  });

  it("answers a bad signature and an unknown project with the same message (no project-id oracle)", async () => {
    const { a, b } = await twoProjects();
    const badSig = await kick({
      body: BODY,
      token: await sign({ projectId: a.id, secret: b.worker_secret, body: BODY }),
    });
    const unknown = await kick({
      body: BODY,
      token: await sign({ projectId: 4242, secret: a.worker_secret, body: BODY }),
    });
    expect((await expectError(badSig.response, 401, "unauthorized")).error).toEqual(
      (await expectError(unknown.response, 401, "unauthorized")).error,
    );
  });

  it("refuses a token once its project is deleted", async () => {
    const { a } = await twoProjects();
    const token = await sign({ projectId: a.id, secret: a.worker_secret, body: BODY });
    const { env } = apiHarness();
    await env.DB.prepare("DELETE FROM projects WHERE id = ?").bind(a.id).run();
    const { response, sent } = await kick({ body: BODY, token });
    await expectError(response, 401, "unauthorized");
    expect(sent).toHaveLength(0);
  });

  it.each<[string, unknown]>([
    ["missing", undefined],
    ["empty", ""],
    ["a number", 42],
    ["null", null],
    ["an object", { id: "x" }],
    ["with a slash", "a/b"],
    ["with a space", "a b"],
    ["with a query", "a?x=1"],
    ["with percent-encoding", "a%2Fb"],
    ["over 200 characters", "r".repeat(201)],
    ["with a newline", "a\nb"],
    // The consumer puts the run id in a path (/__workflow/{runId}/execute); a dot segment would
    // be resolved away by URL parsing and reach another route.
    ["'.' (a dot segment)", "."],
    ["'..' (a dot segment)", ".."],
  ])("rejects runId %s with 400 invalid_input and enqueues nothing", async (_what, runId) => {
    const body = JSON.stringify({ runId });
    const { a } = await twoProjects();
    const { response, sent } = await kick({
      body,
      token: await sign({ projectId: a.id, secret: a.worker_secret, body }),
    });
    const error = await expectError(response, 400, "invalid_input");
    expect(error.error.message).toMatch(/runId/);
    expect(sent).toHaveLength(0);
  });

  it.each([
    { name: "malformed JSON", body: '{"runId":' },
    { name: "empty body", body: "" },
    { name: "a JSON array", body: '["run_1"]' },
    { name: "a JSON string", body: '"run_1"' },
  ])("rejects a validly signed $name with 400 malformed_json and enqueues nothing", async ({ body }) => {
    const { a } = await twoProjects();
    const { response, sent } = await kick({
      body,
      token: await sign({ projectId: a.id, secret: a.worker_secret, body }),
    });
    await expectError(response, 400, "malformed_json");
    expect(sent).toHaveLength(0);
  });

  it("authenticates before looking at the body: an unsigned malformed body is a 401", async () => {
    await twoProjects();
    const { response, sent } = await kick({ body: "{not json", token: null });
    await expectError(response, 401, "unauthorized");
    expect(sent).toHaveLength(0);
  });

  it.each([
    { name: "declared in Content-Length", streamed: false },
    { name: "streamed without Content-Length", streamed: true },
  ])("rejects a body over 4 KiB ($name) with 413 and enqueues nothing", async ({ streamed }) => {
    const { a } = await twoProjects();
    const big = JSON.stringify({ runId: "run_1", pad: "x".repeat(4 * 1024) });
    const token = await sign({ projectId: a.id, secret: a.worker_secret, body: big });
    const { response, sent } = await kick({
      body: streamed ? streamOfText(big) : big,
      token,
      headers: streamed ? {} : { "content-length": String(big.length) },
    });
    await expectError(response, 413, "payload_too_large");
    expect(sent).toHaveLength(0);
  });

  it("accepts a validly signed body streamed without Content-Length", async () => {
    const { a } = await twoProjects();
    const body = JSON.stringify({ runId: "run_stream" });
    const { response, sent } = await kick({
      body: streamOfText(body),
      token: await sign({ projectId: a.id, secret: a.worker_secret, body }),
    });
    expect(response.status).toBe(202);
    expect(sent.map((s) => s.body)).toEqual([{ runId: "run_stream", scriptName: "proj-a-proj" }]);
  });

  it("does not accept the route with another method", async () => {
    const { a } = await twoProjects();
    const token = await sign({ projectId: a.id, secret: a.worker_secret, body: BODY, method: "PUT" });
    const { response, sent } = await kick({ method: "PUT", body: BODY, token });
    await expectError(response, 404, "not_found");
    expect(sent).toHaveLength(0);
  });

  it("accepts each project only for itself: A's and B's kicks land on their own scripts", async () => {
    const { a, b } = await twoProjects();
    const harness = apiHarness();
    for (const [row, runId] of [
      [a, "run_a"],
      [b, "run_b"],
    ] as const) {
      const body = JSON.stringify({ runId });
      const token = await sign({ projectId: row.id, secret: row.worker_secret, body });
      const request = new Request(API_ORIGIN + PATH, { method: "POST", headers: { [IDENTITY_HEADER]: token }, body });
      expect((await api.fetch(request, harness.env, createExecutionContext())).status).toBe(202);
    }
    expect(harness.queue.sent.map((s) => s.body)).toEqual([
      { runId: "run_a", scriptName: "proj-a-proj" },
      { runId: "run_b", scriptName: "proj-b-proj" },
    ]);
  });
});

/** The rows of `workflow_executions_in_flight`: one per run with a message in flight. */
async function inFlight(): Promise<{ script_name: string; run_id: string }[]> {
  const { env } = apiHarness();
  const { results } = await env.DB.prepare(
    "SELECT script_name, run_id FROM workflow_executions_in_flight ORDER BY run_id",
  ).all<{ script_name: string; run_id: string }>();
  return results;
}

/** Sends one request through the API worker with a harness the caller keeps (its queue spy counts every send). */
async function send(harness: ReturnType<typeof apiHarness>, body: string, token: string) {
  const request = new Request(API_ORIGIN + PATH, { method: "POST", headers: { [IDENTITY_HEADER]: token }, body });
  return api.fetch(request, harness.env, createExecutionContext());
}

// Hundreds of requests a test: a loaded 2-core machine needs far more than the default 5 s.
describe("POST /internal/workflow/execute is bounded", { timeout: 60_000 }, () => {
  const BODY = JSON.stringify({ runId: "run_1" });
  // The rate windows (10 s) and the tokens' lifetime are read from the wall clock (Date.now()): it
  // stands still during each test, so how long hundreds of requests take on a loaded machine
  // changes nothing.
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["Date"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("300 replays of one execute request: one 202 and one message; 299 refused as replays (401)", async () => {
    const { a } = await twoProjects();
    const harness = apiHarness();
    const token = await sign({ projectId: a.id, secret: a.worker_secret, body: BODY });
    const statuses: number[] = [];
    const messages = new Set<string>();
    for (let i = 0; i < 300; i++) {
      const response = await send(harness, BODY, token);
      statuses.push(response.status);
      if (response.status === 401)
        messages.add(((await response.json()) as { error: { message: string } }).error.message);
    }
    expect(statuses.filter((s) => s === 202)).toHaveLength(1);
    expect(statuses.filter((s) => s === 401)).toHaveLength(299);
    expect([...messages]).toEqual(["X-Platform-Identity token already used; this route accepts each token once."]);
    expect(harness.queue.sent).toHaveLength(1);
    expect(await inFlight()).toEqual([{ script_name: "proj-a-proj", run_id: "run_1" }]);
  }, 120_000);

  it("300 freshly signed requests for one run (a tenant can sign as many as it likes): 60 queued answers, one message", async () => {
    const { a } = await twoProjects();
    const harness = apiHarness();
    // Same run, a different body each time, so each token is new; signed first and sent as one burst, so
    // all 300 land within one rate window even on a loaded machine.
    const bodies = Array.from({ length: 300 }, (_, n) => JSON.stringify({ runId: "run_1", n }));
    const tokens = await Promise.all(bodies.map((body) => sign({ projectId: a.id, secret: a.worker_secret, body })));
    const statuses = (await Promise.all(bodies.map((body, i) => send(harness, body, tokens[i]!)))).map((r) => r.status);
    expect(statuses.filter((s) => s === 202)).toHaveLength(EXECUTE_RATE.limit);
    expect(statuses.filter((s) => s === 429)).toHaveLength(300 - EXECUTE_RATE.limit);
    expect(harness.queue.sent.map((s) => s.body)).toEqual([{ runId: "run_1", scriptName: "proj-a-proj" }]);
    expect(await inFlight()).toHaveLength(1);
  }, 120_000);

  const replays: { name: string; first: (p: { a: ProjectRow }) => { body: string }; firstStatus: number }[] = [
    { name: "after it was queued (202)", first: () => ({ body: BODY }), firstStatus: 202 },
    {
      name: "after its body was refused (400)",
      first: () => ({ body: JSON.stringify({ runId: "a/b" }) }),
      firstStatus: 400,
    },
    { name: "after its JSON was refused (400)", first: () => ({ body: "{" }), firstStatus: 400 },
  ];

  it.each(replays)("refuses a token replayed $name with 401 unauthorized", async ({ first, firstStatus }) => {
    const projects = await twoProjects();
    const { body } = first(projects);
    const token = await sign({ projectId: projects.a.id, secret: projects.a.worker_secret, body });
    const harness = apiHarness();
    expect((await send(harness, body, token)).status).toBe(firstStatus);
    const sentBefore = harness.queue.sent.length;
    const error = await expectError(await send(harness, body, token), 401, "unauthorized");
    expect(error.error.message).toMatch(/X-Platform-Identity token already used/);
    expect(harness.queue.sent).toHaveLength(sentBefore);
  });

  it("does not spend a token that fails verification: the genuine one still works once", async () => {
    const { a, b } = await twoProjects();
    const harness = apiHarness();
    const token = await sign({ projectId: a.id, secret: a.worker_secret, body: BODY });
    const [id, ts, sig] = token.split(".") as [string, string, string];
    await expectError(await send(harness, BODY, `${b.id}.${ts}.${sig}`), 401, "unauthorized");
    expect((await send(harness, BODY, `${id}.${ts}.${sig}`)).status).toBe(202);
  });

  it("answers the 61st execute of a project within 10 s with 429 rate_limited and Retry-After; another project is not affected", async () => {
    const { a, b } = await twoProjects();
    const harness = apiHarness();
    const kickRun = async (row: ProjectRow, runId: string) => {
      const body = JSON.stringify({ runId });
      return send(harness, body, await sign({ projectId: row.id, secret: row.worker_secret, body }));
    };
    for (let i = 0; i < EXECUTE_RATE.limit; i++) expect((await kickRun(a, `run_${i}`)).status).toBe(202);
    const refused = await kickRun(a, "run_61");
    const error = await expectError(refused, 429, "rate_limited");
    expect(error.error.message).toMatch(/60 workflow executions per 10 seconds/);
    const retryAfter = Number(refused.headers.get("Retry-After"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(EXECUTE_RATE.windowMS / 1000);
    expect(harness.queue.sent).toHaveLength(EXECUTE_RATE.limit);
    expect((await kickRun(b, "run_b")).status).toBe(202);
  });

  it("counts executes per account too: past 120 per 10 s across an account's projects, a third project gets 429 naming the account's limit", async () => {
    const { user } = await userWithProject("ada@example.com", "a-proj");
    await createProject(user.token, "b-proj");
    await createProject(user.token, "c-proj");
    const [a, b, c] = [await projectRow("a-proj"), await projectRow("b-proj"), await projectRow("c-proj")];
    const harness = apiHarness();
    const kickRun = async (row: ProjectRow, runId: string) => {
      const body = JSON.stringify({ runId });
      return send(harness, body, await sign({ projectId: row.id, secret: row.worker_secret, body }));
    };
    for (const row of [a, b]) {
      for (let i = 0; i < EXECUTE_RATE.limit; i++) expect((await kickRun(row, `run_${i}`)).status).toBe(202);
    }
    const refused = await kickRun(c, "run_c");
    const error = (await expectError(refused, 429, "rate_limited")) as unknown as {
      error: { message: string; details: Record<string, unknown> };
    };
    const retryAfter = Number(refused.headers.get("Retry-After"));
    expect(error.error.message).toBe(
      `Account rate limit reached: the account that owns this project may make 120 workflow executions per 10 seconds across all its projects together (the account's limit, not this project's). Retry in ${retryAfter} s.`,
    );
    expect(error.error.details).toEqual({
      retryAfterSeconds: retryAfter,
      bucket: "workflow-execute",
      scope: "account",
      limit: 120,
      windowSeconds: 10,
    });
    expect(harness.queue.sent).toHaveLength(2 * EXECUTE_RATE.limit);
    // Another account is not affected.
    const { row: other } = await userWithProject("bob@example.com", "bob-proj");
    expect((await kickRun(other, "run_bob")).status).toBe(202);
  });

  it.each([
    { name: "a fresh row (a message in flight)", ageMS: 60_000, sends: 0 },
    { name: "a row just short of stale", ageMS: IN_FLIGHT_STALE_MS - 10_000, sends: 0 },
    { name: "a stale row (its message lost)", ageMS: IN_FLIGHT_STALE_MS + 1_000, sends: 1 },
  ])("with $name for the run, sends $sends message(s)", async ({ ageMS, sends }) => {
    const { a } = await twoProjects();
    const harness = apiHarness();
    await harness.env.DB.prepare(
      "INSERT INTO workflow_executions_in_flight (script_name, run_id, enqueued_at) VALUES (?, ?, ?)",
    )
      .bind("proj-a-proj", "run_1", Date.now() - ageMS)
      .run();
    const response = await send(harness, BODY, await sign({ projectId: a.id, secret: a.worker_secret, body: BODY }));
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ queued: true, runId: "run_1" });
    expect(harness.queue.sent).toHaveLength(sends);
    expect(await inFlight()).toHaveLength(1);
  });

  it("keeps no row when the send fails, so the next request sends", async () => {
    const { a } = await twoProjects();
    const failing = apiHarness({
      env: {
        WORKFLOW_QUEUE: {
          send: async () => {
            throw new Error("queue down");
          },
        } as unknown as Queue,
      },
    });
    const token = await sign({ projectId: a.id, secret: a.worker_secret, body: BODY });
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    expect((await send(failing, BODY, token)).status).toBe(500);
    errors.mockRestore();
    expect(await inFlight()).toEqual([]);
    const harness = apiHarness();
    const body = JSON.stringify({ runId: "run_1", again: true });
    expect((await send(harness, body, await sign({ projectId: a.id, secret: a.worker_secret, body }))).status).toBe(
      202,
    );
    expect(harness.queue.sent).toHaveLength(1);
  });

  it("sends one message per run: two runs of one project each get theirs", async () => {
    const { a } = await twoProjects();
    const harness = apiHarness();
    for (const [n, runId] of ["run_x", "run_y", "run_x", "run_y"].entries()) {
      const body = JSON.stringify({ runId, n });
      expect((await send(harness, body, await sign({ projectId: a.id, secret: a.worker_secret, body }))).status).toBe(
        202,
      );
    }
    expect(harness.queue.sent.map((s) => s.body.runId)).toEqual(["run_x", "run_y"]);
  });
});
