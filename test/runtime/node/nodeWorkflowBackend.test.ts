import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import {
  createNodeWorkflowBackend,
  installNodeWorkflowBackend,
  type NodeWorkflowBackend,
} from "#src/runtime/node/index.ts";
import { openSqliteWorkflowStore } from "#src/runtime/node/sqliteEventStore.ts";
import { defineWorkflow } from "#src/engine/api/definition.ts";
import { installedWorkflowBackend, resetWorkflowsForTests, workflow } from "#src/engine/api/workflowApi.ts";
import { gate, logBuilder, PROGRESS, PROGRESS_TEST_TIMEOUT_MS, shape } from "#test/support/workflow/index.ts";

// Polls for what the backend's own timers do (PROGRESS: real timers, on a machine that may be loaded).
vi.setConfig({ testTimeout: PROGRESS_TEST_TIMEOUT_MS });

const dir = mkdtempSync(join(tmpdir(), "platform-wf-node-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshPath = () => join(dir, `.platform/workflows-${++files}.sqlite`);

const opened: NodeWorkflowBackend[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((backend) => backend.close()));
  resetWorkflowsForTests();
});

const hold = gate();
const resumable = defineWorkflow(
  "resumable",
  {
    start: async (ctx) => {
      // Attempt 1 of the run "dies" hangs: its process is closed during the step.
      if (ctx.workflowId === "dies" && ctx.attempt === 1) await hold.promise;
      ctx.write("attempt", ctx.attempt);
      return { step: "finish" };
    },
    finish: async (ctx) => ({ done: true, result: { resumedAt: ctx.scratchpad.attempt } }),
  },
  // Timeouts are decided by the (shifted) clock of the second process, not by waiting.
  { stepTimeoutMS: 10_000, backoff: { initialMS: 0 } },
);

function open(path: string, extra: Partial<Parameters<typeof createNodeWorkflowBackend>[0]> = {}) {
  const logs: string[] = [];
  const backend = createNodeWorkflowBackend({
    path,
    definitions: (name) => (name === resumable.name ? resumable : undefined),
    log: (message) => logs.push(message),
    logError: () => {},
    closeGraceMS: 10,
    ...extra,
  });
  opened.push(backend);
  return { backend, logs };
}

describe("node backend", () => {
  it("resumes a run left in flight by a previous process: the start-up sweep records it as interrupted at once (not after the step timeout) and retries", async () => {
    const path = freshPath();
    const first = open(path);
    const { runId } = await first.backend.start("resumable", null, { id: "dies" });
    await vi.waitFor(() => expect(first.backend.store.lastEvent(runId)?.type).toBe("step_started"), PROGRESS);
    await first.backend.close();

    // The same clock: the step's 10 s timeout has not passed, and need not.
    const second = open(path);
    const view = await second.backend.waitForTerminal(runId);
    expect(view).toMatchObject({ status: "completed", result: { resumedAt: 2 } });
    expect(shape(view.events).slice(0, 4)).toEqual([
      "workflow_created",
      "step_started(start,1)",
      "step_failed(start,1,retryable)",
      "step_started(start,2)",
    ]);
    expect(view.events[2]?.payload).toMatchObject({ reason: "interrupted", retryable: true });
    expect(second.logs[0]).toBe(
      "Re-enqueued 1 workflow(s); 1 step(s) cut off by the previous process recorded as interrupted",
    );
    hold.open();
  });

  it("picks up a run whose first step never started (stuck_created) on start-up", async () => {
    const path = freshPath();
    const seed = openSqliteWorkflowStore(path);
    logBuilder("seeded").created("resumable").writeTo(seed);
    seed.close();
    const { backend, logs } = open(path);
    const view = await backend.waitForTerminal("seeded");
    expect(view).toMatchObject({ status: "completed", result: { resumedAt: 1 } });
    expect(logs[0]).toBe("Re-enqueued 1 workflow(s)");
  });

  it("sweeps on its recovery timer and logs each sweep", async () => {
    const { logs } = open(freshPath(), { recoveryIntervalMS: 10 });
    await vi.waitFor(() => expect(logs.length).toBeGreaterThanOrEqual(3), PROGRESS);
    expect(new Set(logs)).toEqual(new Set(["Re-enqueued 0 workflow(s)"]));
  });

  it("close() stops the recovery timer and closes the database", async () => {
    const { backend, logs } = open(freshPath(), { recoveryIntervalMS: 5 });
    await vi.waitFor(() => expect(logs.length).toBeGreaterThanOrEqual(1), PROGRESS);
    await backend.close();
    const count = logs.length;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(logs.length).toBe(count);
    expect(backend.store.db.isOpen).toBe(false);
  });

  it("keeps runs across restarts: a finished run is still listed and readable", async () => {
    const path = freshPath();
    const quick = defineWorkflow("quick", { start: async (ctx) => ({ done: true, result: ctx.data }) });
    const first = createNodeWorkflowBackend({ path, definitions: () => quick, log: () => {} });
    const { runId } = await first.start("quick", { keep: true }, { id: "kept" });
    await first.waitForTerminal(runId);
    await first.close();
    const second = createNodeWorkflowBackend({ path, definitions: () => quick, log: () => {} });
    opened.push(second);
    expect(await second.get(runId)).toMatchObject({ workflowId: "kept", status: "completed", result: { keep: true } });
    expect((await second.list({ limit: 10 })).runs.map((r) => r.id)).toEqual([runId]);
  });

  it("installNodeWorkflowBackend makes the platform module's workflow API use it", async () => {
    workflow("hello", { start: async (ctx) => ({ done: true, result: `hi ${ctx.data}` }) });
    const backend = installNodeWorkflowBackend({ path: freshPath(), log: () => {} });
    opened.push(backend);
    expect(installedWorkflowBackend()).toBe(backend);
    const run = await workflow.start("hello", "Ada");
    await expect(run.result()).resolves.toBe("hi Ada");
  });
});
