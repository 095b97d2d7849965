/**
 * The project worker's internal workflow routes, through the real entry wrapper with the Durable
 * Object bindings, called the way the platform calls them (workflowRoutes.fixture.ts). This file:
 * starting a run, getting and listing runs; execute, events and cancel, who may call, the
 * recovery cron and the queue path are in workflowRoutes.<aspect>.workerd.test.ts.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { RunListPage } from "#src/engine/storage/store.ts";
import { expectError, waitForIndexed } from "#test/support/workerd/index.ts";
import { completedGreetSummary } from "#test/support/workflow/index.ts";
import { gates, project, useProjectWorker } from "./workflowRoutes.fixture.ts";
import { call, start, startRun, types, waitUntilTerminal } from "./workflowRoutes.client.ts";

useProjectWorker();

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
    expect(project.userCodeCalls).toBe(0);
  });

  it("answers 200 with the active run for an id in use (created: false), 409 when another workflow holds the id", async () => {
    gates.gateFor("order-1");
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

    gates.gateFor("order-1").open();
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
    gates.gateFor("g1");
    gates.gateFor("g2");
    const g1 = (await startRun("gated", null, "g1")).runId;
    const g2 = (await startRun("gated", null, "g2")).runId;
    for (const runId of done) await waitForIndexed(runId, "completed", project.env);

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
    expect(page1.runs[0]).toEqual(completedGreetSummary(done[2]!));
  });

  // The refused values of each query parameter.
  const invalidQueries = {
    limit: ["?limit=abc", "?limit=0", "?limit=101", "?limit=1.5", "?limit=-1", "?limit="],
    status: ["?status=done", "?status=", "?status=RUNNING"],
    name: ["?name="],
    cursor: ["?cursor=", "?cursor=not-a-cursor"],
  };
  it.each(Object.entries(invalidQueries).flatMap(([field, queries]) => queries.map((query) => ({ query, field }))))(
    "answers 400 invalid_input for $query",
    async ({ query, field }) => {
      const body = await expectError(await call("GET", `/__workflow/runs${query}`), 400, "invalid_input");
      expect(body.error.message).toContain(field);
    },
  );

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

describe("POST /__workflow/send (start-or-send)", () => {
  const send = (body: unknown) => call("POST", "/__workflow/send", { body: JSON.stringify(body) });

  it("starts the id's run with the event (201), then delivers to it while it is active (200)", async () => {
    const body = { workflowId: "deploy-9", name: "approval", payload: { by: "ada" }, start: { name: "approval" } };
    const first = await send(body);
    expect(first.status).toBe(201);
    const { runId } = (await first.json()) as { runId: string };
    const view = await waitUntilTerminal(runId);
    expect(view).toMatchObject({ workflowId: "deploy-9", result: { name: "approval", payload: { by: "ada" } } });
    expect(types(view).slice(0, 2)).toEqual(["workflow_created", "event_received"]);
  });

  it("an active run of the id takes the event, whichever workflow it runs", async () => {
    const started = await startRun("approval", null, "deploy-10");
    const sent = await send({ workflowId: "deploy-10", name: "approval", payload: 1, start: { name: "greet" } });
    expect(sent.status).toBe(200);
    expect(await sent.json()).toEqual({ runId: started.runId, created: false });
    expect(await waitUntilTerminal(started.runId)).toMatchObject({ result: { name: "approval", payload: 1 } });
  });

  it.each([
    ["an unknown workflow", { workflowId: "w", name: "e", start: { name: "nope" } }, 404, "unknown_workflow"],
    ["no start", { workflowId: "w", name: "e" }, 400, "invalid_input"],
    ["a malformed body", "{", 400, "malformed_json"],
  ])("refuses %s and starts nothing", async (_, body, status, code) => {
    const response = typeof body === "string" ? await call("POST", "/__workflow/send", { body }) : await send(body);
    await expectError(response, status, code);
  });
});
