import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { INTERNAL_HEADER, pathAndQueryOf, verifyRequestToken } from "#src/core/requestToken.ts";
import { replaceProjectCronsStatements } from "#src/workers/db/projectCronsTable.ts";
import type { ProjectRow } from "#src/workers/db/projectsTable.ts";
import {
  apiHarness,
  callApi,
  createUserWithToken,
  expectError,
  fakeDispatcher,
  streamOfBytes,
  userWithProject,
  type DispatchedCall,
} from "#test/support/workerd/index.ts";

const KiB = 1024;

/**
 * A project worker answering the internal control routes as the runtime's contract says:
 * run "missing" does not exist, run "done" has finished, any other run is waiting.
 */
function contractProject() {
  return fakeDispatcher(async (request) => {
    const url = new URL(request.url);
    const match = /^\/__workflow\/runs\/([^/]+)\/(cancel|events)$/.exec(url.pathname);
    if (!match || request.method !== "POST")
      return Response.json({ error: { code: "not_found", message: "Not found." } }, { status: 404 });
    const runId = decodeURIComponent(match[1]!);
    if (runId === "missing")
      return Response.json(
        { error: { code: "not_found", message: `Workflow run "${runId}" does not exist.` } },
        { status: 404 },
      );
    if (runId === "done")
      return Response.json(
        { error: { code: "conflict", message: `Workflow run "${runId}" has finished.` } },
        { status: 409 },
      );
    if (match[2] === "cancel")
      return Response.json({ run: { id: runId, status: "cancelled", events: [] } }, { status: 200 });
    return Response.json({ accepted: true }, { status: 202 });
  });
}

async function ownerWithProject() {
  const dispatcher = contractProject();
  const harness = apiHarness({ dispatcher });
  const { user, row } = await userWithProject("ada@example.com", "shop");
  return { user, row, harness, calls: dispatcher.calls };
}

/** The owner of "shop" (a contract project) posting `body` to `path` with their CLI token. */
async function ownerPosts(path: string, body: unknown) {
  const owner = await ownerWithProject();
  const response = await callApi("POST", path, { token: owner.user.token, body, env: owner.harness.env });
  return { ...owner, response };
}

/** The call reached the project as the platform: an internal token for this method, path and body. */
describe("POST /projects/:slug/workflows/send (start-or-send): body and who may call", () => {
  const valid = {
    workflowId: "deploy-7",
    name: "approval",
    payload: { by: "ada" },
    start: { name: "deploy", data: {} },
  };

  it.each([
    { name: "no start", body: { workflowId: "deploy-7", name: "approval" } },
    { name: "start without a name", body: { ...valid, start: { data: {} } } },
    { name: "start with a field it does not take", body: { ...valid, start: { name: "deploy", id: "x" } } },
    { name: "no workflow id", body: { name: "approval", start: { name: "deploy" } } },
    { name: "a workflow id of 257 characters", body: { ...valid, workflowId: "w".repeat(257) } },
    { name: "an event name with a newline", body: { ...valid, name: "appro\nval" } },
    { name: "an unknown field", body: { ...valid, runId: "other" } },
  ])("refuses $name with 400 invalid_input, nothing reaches the project", async ({ body }) => {
    const { response, calls } = await ownerPosts("/projects/shop/workflows/send", body);
    await expectError(response, 400, "invalid_input");
    expect(calls).toEqual([]);
  });

  it("forwards a valid body to the project's /__workflow/send, signed", async () => {
    const { row, calls } = await ownerPosts("/projects/shop/workflows/send", valid);
    const call = calls[0]!;
    expect(call.url.pathname).toBe("/__workflow/send");
    expect(JSON.parse(call.body)).toEqual(valid);
    await expectSignedFor(call, row);
  });

  it("another user's project → 404 as if it did not exist, nothing reaches it", async () => {
    const { harness, calls } = await ownerWithProject();
    const mallory = await createUserWithToken("mallory@example.com");
    const response = await callApi("POST", "/projects/shop/workflows/send", {
      token: mallory.token,
      body: valid,
      env: harness.env,
    });
    await expectError(response, 404, "not_found");
    expect(calls).toEqual([]);
  });
});

async function expectSignedFor(call: DispatchedCall, row: ProjectRow) {
  const check = await verifyRequestToken(
    "internal",
    call.headers.get(INTERNAL_HEADER),
    { method: call.method, pathAndQuery: pathAndQueryOf(call.url), body: call.body },
    { lookupSecret: (id) => (id === String(row.id) ? row.worker_secret : null) },
  );
  expect(check).toEqual({ ok: true, projectId: String(row.id) });
}

const routes = [
  { action: "cancel", body: { reason: "no longer needed" } },
  { action: "events", body: { name: "approval", payload: { by: "ada" } } },
] as const;

describe("POST /projects/:slug/workflows/:runId/{cancel,events}: who may call", () => {
  for (const route of routes) {
    const path = `/projects/shop/workflows/run-1/${route.action}`;

    it.each<{ name: string; headers: Record<string, string> }>([
      { name: "no token", headers: {} },
      { name: "a token that does not exist", headers: { authorization: `Bearer plt_${"A".repeat(43)}` } },
      { name: "a malformed token", headers: { authorization: "Bearer plt_short" } },
    ])(`${route.action}: $name → 401, nothing reaches the project`, async ({ headers }) => {
      const { harness, calls } = await ownerWithProject();
      await expectError(
        await callApi("POST", path, { headers, body: route.body, env: harness.env }),
        401,
        "unauthorized",
      );
      expect(calls).toEqual([]);
    });

    it(`${route.action}: an expired token → 401, nothing reaches the project`, async () => {
      const { user, harness, calls } = await ownerWithProject();
      await env.DB.prepare("UPDATE cli_tokens SET expires_at = ?")
        .bind(Date.now() - 1000)
        .run();
      const body = await expectError(
        await callApi("POST", path, { token: user.token, body: route.body, env: harness.env }),
        401,
        "unauthorized",
      );
      expect(body.error.message).toMatch(/expired/);
      expect(calls).toEqual([]);
    });

    it(`${route.action}: another user's project → 404 as if it did not exist, nothing reaches it`, async () => {
      const { harness, calls } = await ownerWithProject();
      const mallory = await createUserWithToken("mallory@example.com");
      const response = await callApi("POST", path, { token: mallory.token, body: route.body, env: harness.env });
      const body = await expectError(response, 404, "not_found");
      expect(body.error.message).toBe('No project named "shop" in your account.');
      expect(calls).toEqual([]);
    });

    it(`${route.action}: a project that does not exist → 404`, async () => {
      const { response, calls } = await ownerPosts(`/projects/nope/workflows/run-1/${route.action}`, route.body);
      await expectError(response, 404, "not_found");
      expect(calls).toEqual([]);
    });
  }
});

describe("POST /projects/:slug/workflows/:runId/cancel: body", () => {
  it.each([
    { name: "not JSON", body: '{"reason":', code: "malformed_json" },
    { name: "a JSON array", body: "[]", code: "malformed_json" },
    { name: "a JSON string", body: '"stop"', code: "malformed_json" },
    { name: "invalid UTF-8", body: new Uint8Array([0x7b, 0xff, 0x7d]), code: "malformed_json" },
    { name: "reason a number", body: { reason: 5 }, code: "invalid_input" },
    { name: "reason null", body: { reason: null }, code: "invalid_input" },
    { name: "reason of 501 characters", body: { reason: "r".repeat(501) }, code: "invalid_input" },
    { name: "an unknown field", body: { reason: "x", force: true }, code: "invalid_input" },
  ])("refuses $name with 400 $code, nothing reaches the project", async ({ body, code }) => {
    const { response, calls } = await ownerPosts("/projects/shop/workflows/run-1/cancel", body);
    await expectError(response, 400, code);
    expect(calls).toEqual([]);
  });

  it.each([
    { name: "a reason", body: { reason: "no longer needed" }, forwarded: { reason: "no longer needed" } },
    { name: "a reason of 500 characters", body: { reason: "r".repeat(500) }, forwarded: { reason: "r".repeat(500) } },
    { name: "no reason", body: {}, forwarded: {} },
    { name: "an empty body", body: undefined, forwarded: {} },
  ])("forwards $name to the project's cancel route, signed, and relays its 200", async ({ body, forwarded }) => {
    const { response, row, calls } = await ownerPosts("/projects/shop/workflows/run-1/cancel", body);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ run: { id: "run-1", status: "cancelled", events: [] } });
    expect(calls).toHaveLength(1);
    const call = calls[0]!;
    expect(call.scriptName).toBe(row.script_name);
    expect({ method: call.method, path: call.url.pathname }).toEqual({
      method: "POST",
      path: "/__workflow/runs/run-1/cancel",
    });
    expect(JSON.parse(call.body)).toEqual(forwarded);
    await expectSignedFor(call, row);
  });
});

describe("POST /projects/:slug/workflows/:runId/events: body", () => {
  it.each([
    { name: "not JSON", body: "{name: approval}", code: "malformed_json" },
    { name: "a JSON array", body: '["approval"]', code: "malformed_json" },
    { name: "no name", body: { payload: 1 }, code: "invalid_input" },
    { name: "an empty name", body: { name: "" }, code: "invalid_input" },
    { name: "a name of 101 characters", body: { name: "n".repeat(101) }, code: "invalid_input" },
    { name: "a name with a newline", body: { name: "appro\nval" }, code: "invalid_input" },
    { name: "a name with a NUL", body: { name: "appro\u0000val" }, code: "invalid_input" },
    { name: "a name with a bidi override", body: { name: "appro\u202eval" }, code: "invalid_input" },
    { name: "a name that is a number", body: { name: 7 }, code: "invalid_input" },
    { name: "an unknown field", body: { name: "approval", runId: "other" }, code: "invalid_input" },
  ])("refuses $name with 400 $code, nothing reaches the project", async ({ body, code }) => {
    const { response, calls } = await ownerPosts("/projects/shop/workflows/run-1/events", body);
    await expectError(response, 400, code);
    expect(calls).toEqual([]);
  });

  it.each([
    { name: "a name and a payload", body: { name: "approval", payload: { by: "ada" } } },
    { name: "a name only", body: { name: "approval" } },
    { name: "a null payload", body: { name: "approval", payload: null } },
    { name: "a name of 100 characters with spaces and accents", body: { name: `é ${"n".repeat(98)}` } },
  ])("forwards $name as sent, signed, and relays the project's 202", async ({ body }) => {
    const { response, row, calls } = await ownerPosts("/projects/shop/workflows/run-1/events", body);
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ accepted: true });
    const call = calls[0]!;
    expect(call.url.pathname).toBe("/__workflow/runs/run-1/events");
    expect(JSON.parse(call.body)).toEqual(body);
    await expectSignedFor(call, row);
  });

  it("the token it signs is bound to the events path: replayed against cancel it does not verify", async () => {
    const { user, row, harness, calls } = await ownerWithProject();
    await callApi("POST", "/projects/shop/workflows/run-1/events", {
      token: user.token,
      body: { name: "approval" },
      env: harness.env,
    });
    const call = calls[0]!;
    const replayed = await verifyRequestToken(
      "internal",
      call.headers.get(INTERNAL_HEADER),
      { method: "POST", pathAndQuery: "/__workflow/runs/run-1/cancel", body: call.body },
      { lookupSecret: () => row.worker_secret },
    );
    expect(replayed).toEqual({ ok: false, reason: "bad_signature" });
  });
});

describe("body size (64 KiB)", () => {
  /** `{"name":"approval","payload":"xxx…"}` of exactly `size` bytes. */
  const eventOfSize = (size: number) => {
    const base = JSON.stringify({ name: "approval", payload: "" });
    return JSON.stringify({ name: "approval", payload: "x".repeat(size - base.length) });
  };
  const cancelOfSize = (size: number) => {
    const base = JSON.stringify({ reason: "" });
    return JSON.stringify({ reason: " ".repeat(size - base.length) });
  };

  it("accepts an event of exactly 64 KiB", async () => {
    const { response, calls } = await ownerPosts("/projects/shop/workflows/run-1/events", eventOfSize(64 * KiB));
    expect(response.status).toBe(202);
    expect(calls).toHaveLength(1);
  });

  it.each([
    { name: "an event one byte over, with Content-Length", action: "events", body: () => eventOfSize(64 * KiB + 1) },
    { name: "a cancel one byte over, with Content-Length", action: "cancel", body: () => cancelOfSize(64 * KiB + 1) },
    { name: "an event streamed without Content-Length", action: "events", body: () => streamOfBytes(64 * KiB + 1) },
    { name: "a cancel streamed without Content-Length", action: "cancel", body: () => streamOfBytes(200 * KiB) },
  ])("refuses $name with 413, nothing reaches the project", async ({ action, body }) => {
    const { response, calls } = await ownerPosts(`/projects/shop/workflows/run-1/${action}`, body());
    await expectError(response, 413, "payload_too_large");
    expect(calls).toEqual([]);
  });
});

describe("the project's answer passes through", () => {
  it.each([
    { action: "cancel", runId: "missing", status: 404, code: "not_found" },
    { action: "cancel", runId: "done", status: 409, code: "conflict" },
    { action: "events", runId: "missing", status: 404, code: "not_found" },
    { action: "events", runId: "done", status: 409, code: "conflict" },
  ])("$action on run $runId → $status $code", async ({ action, runId, status, code }) => {
    const { response } = await ownerPosts(
      `/projects/shop/workflows/${runId}/${action}`,
      action === "cancel" ? {} : { name: "approval" },
    );
    await expectError(response, status, code);
  });

  it.each([
    { status: 400, code: "invalid_input", message: "payload must be JSON the engine can store" },
    { status: 413, code: "payload_too_large", message: "payload is larger than a step write may be" },
  ])("a $status $code the project decides is relayed as is", async ({ status, code, message }) => {
    const dispatcher = fakeDispatcher(() => Response.json({ error: { code, message } }, { status }));
    const harness = apiHarness({ dispatcher });
    const { user } = await userWithProject("ada@example.com", "shop");
    const response = await callApi("POST", "/projects/shop/workflows/run-1/events", {
      token: user.token,
      body: { name: "approval", payload: [1, 2] },
      env: harness.env,
    });
    const body = await expectError(response, status, code);
    expect(body.error.message).toBe(message);
  });

  it("a run id with reserved characters reaches the project percent-encoded, as one path segment", async () => {
    const { response, calls } = await ownerPosts("/projects/shop/workflows/a%2F..%2Fstart/cancel", {});
    expect(response.status).toBe(200);
    expect(calls[0]!.url.pathname).toBe("/__workflow/runs/a%2F..%2Fstart/cancel");
  });

  it("a run id that is not valid percent-encoding → 404, nothing reaches the project", async () => {
    const { response, calls } = await ownerPosts("/projects/shop/workflows/%E0%A4%A/cancel", {});
    await expectError(response, 404, "not_found");
    expect(calls).toEqual([]);
  });

  it("a project whose worker is not deployed → 502, as for the other workflow routes", async () => {
    const harness = apiHarness({ dispatcher: fakeDispatcher(undefined, { deployed: [] }) });
    const { user } = await userWithProject("ada@example.com", "shop");
    const response = await callApi("POST", "/projects/shop/workflows/run-1/cancel", {
      token: user.token,
      body: {},
      env: harness.env,
    });
    expect(response.status).toBe(502);
    expect(await response.json()).toEqual({
      error: { code: "upstream_error", message: "Project worker proj-shop is not deployed." },
    });
  });
});

describe("POST /projects/:slug/crons/:name/run", () => {
  // A schedule's cron is `__schedule/<workflow>`: its name reaches the route percent-encoded (it answered 404).
  it.each(["__schedule/heartbeat", "__workflow-recovery"])("runs %s, the name decoded once", async (name) => {
    const dispatcher = fakeDispatcher(async () => Response.json({ cron: name, output: "ok" }));
    const harness = apiHarness({ dispatcher });
    const { user, row } = await userWithProject("ada@example.com", "shop");
    await env.DB.batch(replaceProjectCronsStatements(env.DB, row.id, [{ name, schedule: "* * * * *" }]));
    const response = await callApi("POST", `/projects/shop/crons/${encodeURIComponent(name)}/run`, {
      token: user.token,
      env: harness.env,
    });
    expect(response.status).toBe(200);
    expect(dispatcher.calls.map((call) => call.url.pathname)).toEqual([`/__cron/${encodeURIComponent(name)}`]);
  });

  it.each([
    ["a cron the project does not have", "__schedule%2Fnope"],
    ["a name that is not valid percent-encoding", "%E0%A4%A"],
  ])("answers 404 for %s, nothing reaches the project", async (_, segment) => {
    const dispatcher = fakeDispatcher(async () => Response.json({}));
    const harness = apiHarness({ dispatcher });
    const { user } = await userWithProject("ada@example.com", "shop");
    const response = await callApi("POST", `/projects/shop/crons/${segment}/run`, {
      token: user.token,
      env: harness.env,
    });
    await expectError(response, 404, "not_found");
    expect(dispatcher.calls).toEqual([]);
  });
});
