/**
 * What the platform asks of a run through the project worker: execute (join the step loop), and
 * beyond the spec, send it an event or cancel it.
 */
import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { WorkflowRunView } from "#src/engine/execution/describeRun.ts";
import type { RunListPage } from "#src/engine/storage/store.ts";
import { expectError, waitForLastEvent } from "#test/support/workerd/index.ts";
import { PROGRESS } from "#test/support/workflow/index.ts";
import { gates, useProjectWorker } from "./workflowRoutes.fixture.ts";
import { type Call, call, getRun, startRun, types, waitUntilTerminal } from "./workflowRoutes.client.ts";

useProjectWorker();

describe("POST /__workflow/:runId/execute", () => {
  it("joins the step loop under way and answers {done:true} once the run finished", async () => {
    gates.gateFor("exec-1");
    const { runId } = await startRun("gated", "payload", "exec-1");
    await waitForLastEvent(runId, "step_started");
    const executing = call("POST", `/__workflow/${encodeURIComponent(runId)}/execute`);
    const early = await Promise.race([
      executing.then(() => "answered"),
      new Promise((resolve) => setTimeout(() => resolve("waiting"), 100)),
    ]);
    expect(early).toBe("waiting");
    gates.gateFor("exec-1").open();
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
    await waitForLastEvent(runId, "step_failed");
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
    await vi.waitFor(async () => expect((await getRun(runId)).waitingFor).toEqual({ name: "approval" }), PROGRESS);
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
