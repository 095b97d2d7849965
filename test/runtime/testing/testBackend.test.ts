import { Router } from "itty-router";
import { afterEach, describe, expect, it } from "vitest";
import { resetWorkflowsForTests } from "#src/engine/api/workflowApi.ts";
import { email, workflow } from "platform";
import { testRequest, testWorkflow } from "platform/testing";

// Workflows a project's own code starts (a handler, a step) run on the test kit as testWorkflow runs them.
afterEach(() => resetWorkflowsForTests());

function shop() {
  const receipt = workflow<{ to: string }, Record<string, never>, { sent: string }>("receipt", {
    start: async (ctx) => {
      await email.send({ to: ctx.data.to, subject: "Your receipt", html: "<p>Paid.</p>" });
      return { step: "archive", sleepMS: 3_600_000 };
    },
    archive: async () => ({ done: true, result: { sent: "archived" } }),
  });
  workflow("approval", {
    start: async () => ({ step: "approved", waitFor: "approve" }),
    approved: async (ctx) => ({ done: true, result: ctx.event?.payload }),
  });
  const router = Router();
  router.post("/api/pay", async () => {
    const run = await workflow.start(receipt, { to: "ada@example.com" });
    return Response.json({ runId: run.id, result: await run.result() });
  });
  router.post("/api/approval", async () => {
    const run = await workflow.start("approval", {}, { id: "order-7" });
    return Response.json({ runId: run.id, created: run.created });
  });
  router.get("/api/runs/:id", async ({ params }) => Response.json(await workflow.get(params.id!)));
  router.post("/api/wait", async () => {
    const run = await workflow.start("approval", {});
    return Response.json(await run.result());
  });
  router.get("/api/runs", async () => Response.json(await workflow.list({ name: "approval" })));
  return router;
}

describe("workflow.start in a request handler", () => {
  it("drives the run before answering: the handler awaits its result, the test reads its emails", async () => {
    const response = await testRequest(shop(), "/api/pay", { method: "POST" });
    const body = (await response.json()) as { runId: string; result: unknown };
    expect(response.status).toBe(200);
    expect(body.result).toEqual({ sent: "archived" });
    expect(response.runs.map((run) => [run.id, run.name, run.view.status])).toEqual([
      [body.runId, "receipt", "completed"],
    ]);
    expect(response.runs[0]!.outbox).toEqual([
      { to: ["ada@example.com"], subject: "Your receipt", html: "<p>Paid.</p>" },
    ]);
    // The run's email is the run's: the request itself sent none.
    expect(response.outbox).toEqual([]);
  });

  it("a waiting run: the test moves it on; workflow.get, workflow.list and the workflow id see it", async () => {
    const project = shop();
    const first = await testRequest(project, "/api/approval", { method: "POST" });
    const { runId, created } = (await first.json()) as { runId: string; created: boolean };
    expect(created).toBe(true);
    const again = await testRequest(project, "/api/approval", { method: "POST" });
    expect(await again.json()).toEqual({ runId, created: false });
    expect(again.runs).toEqual([]);

    const run = first.runs[0]!;
    expect(run.view.waitingFor).toEqual({ name: "approve" });
    const listed = (await (await testRequest(project, "/api/runs")).json()) as { runs: { id: string }[] };
    expect(listed.runs.map((r) => r.id)).toContain(runId);
    await run.send("approve", { by: "ada" });
    const seen = await (await testRequest(project, `/api/runs/${runId}`)).json();
    expect(seen).toMatchObject({ id: runId, status: "completed", result: { by: "ada" } });
  });

  it("a handler awaiting the result of a run that waits for an event gets conflict at once", async () => {
    const response = await testRequest(shop(), "/api/wait", { method: "POST" });
    expect(response.status).toBe(409);
    expect(await response.json()).toMatchObject({ error: { code: "conflict" } });
  });
});

describe("workflow.start in a step", () => {
  it("the child runs first, recorded in the parent's runs with its own outbox", async () => {
    shop();
    const parent = workflow("parent", {
      start: async () => {
        const child = await workflow.start("receipt", { to: "bob@example.com" });
        return { done: true, result: { child: child.id, result: await child.result() } };
      },
    });
    const run = await testWorkflow(parent);
    const { child, result } = await run.result();
    expect(result).toEqual({ sent: "archived" });
    expect(run.runs.map((r) => r.id)).toEqual([child]);
    expect(run.runs[0]!.outbox.map((m) => m.to)).toEqual([["bob@example.com"]]);
    expect(run.outbox).toEqual([]);
  });
});

describe("bulk operations and reruns in a test, as the platform does them", () => {
  // The kit's store lives as long as the test process: each test's workflow has a name of its own.
  function desk(name: string) {
    workflow(name, {
      start: async () => ({ step: "approved", waitFor: "approve" }),
      approved: async () => ({ done: true }),
    });
    const router = Router();
    router.post("/api/approval/:id", async ({ params }) => {
      const run = await workflow.start(name, {}, { id: params.id! });
      return Response.json({ runId: run.id });
    });
    router.post("/api/cancel-all", async () =>
      Response.json(await workflow.cancelMany({ name }, { reason: "desk closed" })),
    );
    router.post("/api/rerun-cancelled", async () =>
      Response.json(await workflow.rerunMany({ name, status: "cancelled" })),
    );
    router.post("/api/rerun/:runId", async ({ params }) => Response.json(await workflow.rerun(params.runId!)));
    router.get("/api/statuses", async () =>
      Response.json((await workflow.list({ name })).runs.map((run) => run.status).sort()),
    );
    return router;
  }
  const post = async (project: ReturnType<typeof desk>, path: string) =>
    (await testRequest(project, path, { method: "POST" })).json();

  it("cancelMany and rerunMany answer { matched, affected } and act on each run once", async () => {
    const project = desk("bulk-desk");
    for (const id of ["a", "b", "c"]) await post(project, `/api/approval/${id}`);
    expect(await post(project, "/api/cancel-all")).toEqual({ matched: 3, affected: 3 });
    expect(await post(project, "/api/cancel-all")).toEqual({ matched: 3, affected: 0 });
    expect(await post(project, "/api/rerun-cancelled")).toEqual({ matched: 3, affected: 3 });
    expect(await (await testRequest(project, "/api/statuses")).json()).toEqual([
      "cancelled",
      "cancelled",
      "cancelled",
      "running",
      "running",
      "running",
    ]);
  });

  it("a rerun whose workflow id has an active run is refused with the platform's already_active", async () => {
    const project = desk("rerun-desk");
    const { runId } = (await post(project, "/api/approval/order-9")) as { runId: string };
    await post(project, "/api/cancel-all");
    const { runId: active } = (await post(project, "/api/approval/order-9")) as { runId: string };
    const response = await testRequest(project, `/api/rerun/${runId}`, { method: "POST" });
    expect(response.status).toBe(409);
    expect(await response.json()).toMatchObject({
      error: {
        code: "already_active",
        message: `Workflow id "order-9" has an active run (${active}); a rerun of ${runId} would share it: wait for it to finish`,
      },
    });
  });
});
