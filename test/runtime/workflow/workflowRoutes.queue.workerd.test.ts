/**
 * The whole queue path: the API worker's consumer, a dispatcher that reaches the wrapped project
 * worker, and the run's actor; with the actors on a clock the test moves where a backoff or the
 * step-loop budget must pass.
 */
import {
  createExecutionContext,
  createMessageBatch,
  env,
  getQueueResult,
  runDurableObjectAlarm,
} from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { WorkflowExecuteMessage } from "#src/workers/api/env.ts";
import { consumeWorkflowQueue } from "#src/workers/api/workflowExecution.ts";
import type { Dispatcher } from "#src/workers/dispatch/dispatcher.ts";
import {
  actorOfRun,
  apiHarness,
  lastEventType,
  userWithProject,
  waitForLastEvent,
} from "#test/support/workerd/index.ts";
import { PROGRESS } from "#test/support/workflow/index.ts";
import {
  advanceClock,
  gates,
  OTHER_SECRET,
  project,
  projectEnvFor,
  useProjectWorker,
  useTestClock,
} from "./workflowRoutes.fixture.ts";
import { call, fetchWorker, getRun, startRun, waitUntilTerminal } from "./workflowRoutes.client.ts";

useProjectWorker();

describe("the queue path: API consumer → dispatcher → project worker → run actor", () => {
  /** A D1 project, the project worker wrapped with that project's secret and id, and a dispatcher that reaches it. */
  async function deployedProject() {
    const { row } = await userWithProject("ada@example.com", "shop");
    project.env = projectEnvFor(row.id, row.worker_secret);
    const reached: { method: string; path: string }[] = [];
    const dispatcher: Dispatcher = {
      get(scriptName) {
        if (scriptName !== row.script_name) return null;
        return {
          async fetch(input: RequestInfo | URL, init?: RequestInit) {
            const request = new Request(input, init);
            reached.push({ method: request.method, path: new URL(request.url).pathname });
            return fetchWorker(request);
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
    gates.gateFor("queued-1");
    const runId = (await startRun("gated", { via: "queue" }, "queued-1")).runId;
    await waitForLastEvent(runId, "step_started");

    const consuming = consume(dispatcher, { runId, scriptName: row.script_name });
    await vi.waitFor(
      () => expect(reached).toEqual([{ method: "POST", path: `/__workflow/${runId}/execute` }]),
      PROGRESS,
    );
    gates.gateFor("queued-1").open();
    const { result, sent } = await consuming;
    expect(result.explicitAcks).toEqual(["m1"]);
    expect(result.retryMessages).toEqual([]);
    expect(sent).toEqual([]);
    expect(await getRun(runId)).toMatchObject({ status: "completed", result: { via: "queue" } });
  });

  describe("with a clock the test moves", () => {
    useTestClock();

    it("a run waiting out its retry backoff is not re-enqueued (its row released); its alarm still completes it", async () => {
      const { row, dispatcher } = await deployedProject();
      const runId = (await startRun("flaky", null)).runId;
      await waitForLastEvent(runId, "step_failed");
      const { result, sent } = await consume(dispatcher, { runId, scriptName: row.script_name });
      expect(result.explicitAcks).toEqual(["m1"]);
      expect(sent).toEqual([]);
      expect(await inFlightRows()).toEqual([]);

      advanceClock(61_000);
      expect(await runDurableObjectAlarm(actorOfRun(runId))).toBe(true);
      expect(await waitUntilTerminal(runId)).toMatchObject({ status: "completed", result: { attempt: 2 } });
    });

    it("a run that exhausts its step-loop budget answers {done:false, continue:true} and is re-enqueued once", async () => {
      const { row, dispatcher, reached } = await deployedProject();
      gates.gateFor("marathon-1");
      const runId = (await startRun("marathon", null, "marathon-1")).runId;
      await waitForLastEvent(runId, "step_started");
      const harness = apiHarness();
      await harness.env.DB.prepare(
        "INSERT INTO workflow_executions_in_flight (script_name, run_id, enqueued_at) VALUES (?, ?, ?)",
      )
        .bind(row.script_name, runId, Date.now())
        .run();

      const consuming = consume(dispatcher, { runId, scriptName: row.script_name });
      await vi.waitFor(() => expect(reached).toHaveLength(1), PROGRESS);
      gates.gateFor("marathon-1").open();
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
      gates.gateFor("marathon-2");
      const { runId } = await startRun("marathon", null, "marathon-2");
      await waitForLastEvent(runId, "step_started");
      const executing = call("POST", `/__workflow/${encodeURIComponent(runId)}/execute`);
      gates.gateFor("marathon-2").open();
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
    await waitForLastEvent(runId, "step_failed");
    project.env = projectEnvFor(row.id, OTHER_SECRET);
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const { result, sent } = await consume(dispatcher, { runId, scriptName: row.script_name });
    expect(result.explicitAcks).toEqual(["m1"]);
    expect(sent).toEqual([]);
    expect(errors).toHaveBeenCalled();
    expect(await lastEventType(runId)).toBe("step_failed");
  });
});
