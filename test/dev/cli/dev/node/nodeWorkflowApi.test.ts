import { afterEach, describe, expect, it, vi } from "vitest";
import { createNodeWorkflowApi, NODE_API_PATH } from "#src/dev/cli/dev/node/nodeWorkflowApi.ts";
import { defineWorkflow } from "#src/engine/api/definition.ts";
import { createMemoryWorkflowBackend, type MemoryWorkflowBackend } from "#src/engine/backends/memoryBackend.ts";

const TOKEN = `plt_${"a".repeat(43)}`;

const approval = defineWorkflow("approval", {
  start: async () => ({ step: "approved", waitFor: "approval" }),
  approved: async (ctx) => ({ done: true, result: ctx.event }),
});

let backend: MemoryWorkflowBackend | null = null;
afterEach(async () => {
  await backend?.close();
  backend = null;
});

/** `platform dev --node`'s API over a memory backend that knows one workflow (or none). */
function nodeApi(options: { workflows?: boolean } = {}) {
  backend = createMemoryWorkflowBackend({
    definitions: (name) => (name === "approval" ? approval : undefined),
    log: () => {},
  });
  const active = options.workflows === false ? null : backend;
  const api = createNodeWorkflowApi({ slug: "shop", cliToken: TOKEN, backend: () => active });
  return async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` },
  ) => {
    const response = await api.fetch(
      new Request(`http://127.0.0.1:8787${NODE_API_PATH}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      }),
    );
    return { status: response.status, json: (await response.json()) as Record<string, any> };
  };
}

describe("platform dev --node: the API's workflow routes, for the CLI", () => {
  it("starts, lists, gets, takes an event for a waiting run and cancels, with the API worker's statuses", async () => {
    const call = nodeApi();
    const started = await call("POST", "/projects/shop/workflows", { name: "approval", data: { n: 1 } });
    expect(started.status).toBe(201);
    expect(started.json).toMatchObject({ name: "approval", created: true });
    const runId = started.json.runId as string;

    expect((await call("GET", "/projects/shop/workflows?status=running&limit=5")).json.runs).toHaveLength(1);
    const sent = await call("POST", `/projects/shop/workflows/${encodeURIComponent(runId)}/events`, {
      name: "approval",
      payload: { by: "ada" },
    });
    expect(sent).toEqual({ status: 202, json: { accepted: true } });
    const done = await backend!.waitForTerminal(runId);
    expect(done.result).toEqual({ name: "approval", payload: { by: "ada" } });
    expect((await call("GET", `/projects/shop/workflows/${runId}`)).json.status).toBe("completed");

    const again = await call("POST", `/projects/shop/workflows/${runId}/cancel`, {});
    expect({ status: again.status, code: again.json.error.code }).toEqual({ status: 409, code: "conflict" });
  });

  it("cancels a waiting run and answers its view; a send after that is a conflict", async () => {
    const call = nodeApi();
    const { runId } = (await call("POST", "/projects/shop/workflows", { name: "approval" })).json;
    const cancelled = await call("POST", `/projects/shop/workflows/${runId}/cancel`, { reason: "no longer needed" });
    expect(cancelled.status).toBe(200);
    expect(cancelled.json.run).toMatchObject({ id: runId, status: "cancelled", cancelReason: "no longer needed" });
    const sent = await call("POST", `/projects/shop/workflows/${runId}/events`, { name: "approval" });
    expect({ status: sent.status, code: sent.json.error.code }).toEqual({ status: 409, code: "conflict" });
  });

  it("start-or-send: the first call starts the id's run with the event, the second sends to it", async () => {
    const call = nodeApi();
    const body = { workflowId: "deploy-7", name: "approval", payload: { by: "ada" }, start: { name: "approval" } };
    const first = await call("POST", "/projects/shop/workflows/send", body);
    expect(first.status).toBe(201);
    expect(first.json).toMatchObject({ created: true });
    const done = await backend!.waitForTerminal(first.json.runId);
    expect(done).toMatchObject({ workflowId: "deploy-7", result: { name: "approval", payload: { by: "ada" } } });
    const second = await call("POST", "/projects/shop/workflows/send", body);
    expect(second.status).toBe(201);
    expect(second.json.runId).not.toBe(first.json.runId);
  });

  it.each([
    {
      name: "a start-or-send without start",
      request: ["POST", "/projects/shop/workflows/send", { workflowId: "w", name: "approval" }],
      status: 400,
      code: "invalid_input",
    },
    {
      name: "a start-or-send of an unknown workflow",
      request: ["POST", "/projects/shop/workflows/send", { workflowId: "w", name: "e", start: { name: "nope" } }],
      status: 404,
      code: "unknown_workflow",
    },
    {
      name: "a start-or-send with a field it does not take",
      request: [
        "POST",
        "/projects/shop/workflows/send",
        { workflowId: "w", name: "e", start: { name: "approval" }, id: 1 },
      ],
      status: 400,
      code: "invalid_input",
    },
    {
      name: "no token",
      request: ["GET", "/projects/shop/workflows", undefined, {}],
      status: 401,
      code: "unauthorized",
    },
    {
      name: "another token",
      request: ["GET", "/projects/shop/workflows", undefined, { authorization: `Bearer plt_${"b".repeat(43)}` }],
      status: 401,
      code: "unauthorized",
    },
    {
      name: "the token with a character more",
      request: ["POST", "/projects/shop/workflows/r/cancel", {}, { authorization: `Bearer ${TOKEN}a` }],
      status: 401,
      code: "unauthorized",
    },
    { name: "another project", request: ["GET", "/projects/other/workflows"], status: 404, code: "not_found" },
    { name: "an unknown run", request: ["GET", "/projects/shop/workflows/nope"], status: 404, code: "not_found" },
    {
      name: "cancel of an unknown run",
      request: ["POST", "/projects/shop/workflows/nope/cancel", {}],
      status: 404,
      code: "not_found",
    },
    {
      name: "bad percent-encoding",
      request: ["GET", "/projects/shop/workflows/%E0%A4%A"],
      status: 404,
      code: "not_found",
    },
    { name: "an unknown path", request: ["GET", "/projects/shop/workflows/r/cancel"], status: 404, code: "not_found" },
    {
      name: "an unknown workflow",
      request: ["POST", "/projects/shop/workflows", { name: "nope" }],
      status: 404,
      code: "unknown_workflow",
    },
    {
      name: "start without a name",
      request: ["POST", "/projects/shop/workflows", { data: 1 }],
      status: 400,
      code: "invalid_input",
    },
    {
      name: "a start body that is not JSON",
      request: ["POST", "/projects/shop/workflows", "{"],
      status: 400,
      code: "malformed_json",
    },
    {
      name: "an event without a name",
      request: ["POST", "/projects/shop/workflows/r/events", { payload: 1 }],
      status: 400,
      code: "invalid_input",
    },
    {
      name: "a cancel reason of 501 characters",
      request: ["POST", "/projects/shop/workflows/r/cancel", { reason: "r".repeat(501) }],
      status: 400,
      code: "invalid_input",
    },
    {
      name: "an event body over 64 KiB",
      request: ["POST", "/projects/shop/workflows/r/events", { name: "approval", payload: "x".repeat(64 * 1024) }],
      status: 413,
      code: "payload_too_large",
    },
  ])("$name → $status $code", async ({ request, status, code }) => {
    const call = nodeApi();
    const [method, path, body, headers] = request as [string, string, unknown, Record<string, string> | undefined];
    const answer = await call(method, path, body, headers);
    expect({ status: answer.status, code: answer.json.error?.code }).toEqual({ status, code });
  });

  it("GET …/:runId/stream answers batches of the run's stream from ?from, by ?topic, ended once the run has", async () => {
    const call = nodeApi();
    const runId = (await call("POST", "/projects/shop/workflows", { name: "approval" })).json.runId as string;
    const stream = `/projects/shop/workflows/${encodeURIComponent(runId)}/stream`;
    await vi.waitFor(async () => expect((await backend!.get(runId))?.waitingFor).toBeDefined());
    const waiting = await call("GET", `${stream}?from=0&topic=run`);
    expect(waiting.status).toBe(200);
    expect(waiting.json.messages.map((m: { data: { type: string } }) => m.data.type)).toEqual([
      "step_started",
      "step_completed",
      "waiting",
    ]);
    expect(waiting.json.ended).toBe(false);
    await call("POST", `/projects/shop/workflows/${encodeURIComponent(runId)}/events`, { name: "approval" });
    await backend!.waitForTerminal(runId);
    const rest = await call("GET", `${stream}?from=3`);
    expect(rest.json.messages.map((m: { offset: number }) => m.offset)).toEqual([3, 4, 5]);
    expect(rest.json.ended).toBe(true);
    for (const [query, status] of [
      ["?from=-1", 400],
      ["?topic=BAD", 400],
    ] as const)
      expect((await call("GET", `${stream}${query}`)).status).toBe(status);
    expect((await call("GET", "/projects/shop/workflows/no-such-run/stream")).status).toBe(404);
    expect((await call("GET", `/projects/other/workflows/${runId}/stream`)).status).toBe(404);
  });

  it("a project that registers no workflows → 404", async () => {
    const answer = await nodeApi({ workflows: false })("GET", "/projects/shop/workflows");
    expect({ status: answer.status, code: answer.json.error.code }).toEqual({ status: 404, code: "not_found" });
  });
});
