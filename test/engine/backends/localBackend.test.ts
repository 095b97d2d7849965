import { afterEach, describe, expect, it, vi } from "vitest";
import { PlatformError } from "#src/core/errors.ts";
import { defineWorkflow, type WorkflowDefinition, type WorkflowSteps } from "#src/engine/api/definition.ts";
import { createMemoryWorkflowBackend, type MemoryWorkflowBackend } from "#src/engine/backends/memoryBackend.ts";
import { createMemoryEventStore } from "#src/engine/storage/memoryEventStore.ts";
import {
  gate,
  logBuilder,
  manualClock,
  PROGRESS,
  PROGRESS_TEST_TIMEOUT_MS,
  shape,
} from "#test/support/workflow/index.ts";

// Polls for what the backend's own timers do (PROGRESS: real timers, on a machine that may be loaded).
vi.setConfig({ testTimeout: PROGRESS_TEST_TIMEOUT_MS });

const opened: MemoryWorkflowBackend[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((backend) => backend.close()));
});

function backendWith(definitions: WorkflowDefinition[], extra: Parameters<typeof createMemoryWorkflowBackend>[0] = {}) {
  const logs: string[] = [];
  const errors: string[] = [];
  const byName = new Map(definitions.map((d) => [d.name, d]));
  const backend = createMemoryWorkflowBackend({
    definitions: (name) => byName.get(name),
    log: (message) => logs.push(message),
    logError: (message) => errors.push(message),
    closeGraceMS: 20,
    ...extra,
  });
  opened.push(backend);
  return { backend, logs, errors };
}

const twoSteps = defineWorkflow(
  "w",
  {
    start: async (ctx) => {
      ctx.write("first", ctx.attempt);
      return { step: "finish" };
    },
    finish: async (ctx) => ({ done: true, result: `done ${ctx.runId}` }),
  },
  { backoff: { initialMS: 0 } },
);

describe("local backend: the zero-delay timer loop", () => {
  it("runs a started run to the end without anyone polling", async () => {
    const { backend } = backendWith([twoSteps]);
    const { runId } = await backend.start("w", null, {});
    const view = await backend.waitForTerminal(runId);
    expect(view).toMatchObject({ status: "completed", result: `done ${runId}` });
  });

  it("reschedules itself when an execution's budget runs out", async () => {
    const steps: WorkflowSteps = {};
    for (let i = 0; i < 6; i++)
      steps[i === 0 ? "start" : `s${i}`] = async () => (i === 5 ? { done: true } : { step: `s${i + 1}` });
    // Every clock read moves time 10 ms: each execution gets through a step or two of its 25 ms budget.
    let time = 0;
    const { backend } = backendWith([defineWorkflow("many", steps)], { now: () => (time += 10), budgetMS: 25 });
    const executions = vi.spyOn(backend.store, "events");
    const { runId } = await backend.start("many", null, {});
    expect((await backend.waitForTerminal(runId)).status).toBe("completed");
    // One full log read per execution: more than one execution happened.
    expect(executions.mock.calls.filter(([id, after]) => id === runId && after === undefined).length).toBeGreaterThan(
      2,
    );
  });

  it("waits for a retry on a timer instead of spinning", async () => {
    const attempts: number[] = [];
    const flaky = defineWorkflow(
      "flaky",
      {
        start: async (ctx) => {
          attempts.push(Date.now());
          if (ctx.attempt === 1) throw new Error("flaky");
          return { done: true };
        },
      },
      // Long enough that the failing execution finds the retry not yet due even on a busy machine.
      { backoff: { initialMS: 300, jitter: 0 } },
    );
    const { backend } = backendWith([flaky]);
    const reads = vi.spyOn(backend.store, "events");
    const { runId } = await backend.start("flaky", null, {});
    // Watch the last event only: a full read (events(runId)) happens once per execution.
    await vi.waitFor(() => expect(backend.store.lastEvent(runId)?.type).toBe("workflow_completed"), PROGRESS);
    expect((attempts[1] ?? 0) - (attempts[0] ?? 0)).toBeGreaterThanOrEqual(299);
    // Two executions: the failing one (returns "waiting") and the retry.
    expect(reads.mock.calls.filter(([, after]) => after === undefined)).toHaveLength(2);
  });
});

describe("local backend: the recovery sweep", () => {
  it("re-enqueues stuck runs nobody drives, logs Re-enqueued N workflow(s), and they complete", async () => {
    const store = createMemoryEventStore();
    logBuilder("stuck-created").created("w").writeTo(store);
    logBuilder("stuck-completed")
      .created("w")
      .add("step_started", { step: "start", attempt: 1 })
      .add("step_completed", { step: "start", writes: { first: 1 }, next_step: "finish" })
      .writeTo(store);
    logBuilder("done").created("w").add("workflow_completed", { result: null }).writeTo(store);
    const { backend, logs } = backendWith([twoSteps], { store });
    expect(backend.recoverNow()).toBe(2);
    // The finished run was written long ago (the log builder's clock): past its 30 days, the sweep deletes it.
    expect(logs).toEqual(["Re-enqueued 2 workflow(s)", "Deleted 1 finished workflow run(s) past their retention"]);
    expect((await backend.waitForTerminal("stuck-created")).result).toBe("done stuck-created");
    expect((await backend.waitForTerminal("stuck-completed")).result).toBe("done stuck-completed");
    expect(backend.recoverNow()).toBe(0);
    expect(logs.at(-1)).toBe("Re-enqueued 0 workflow(s)");
  });

  it("records the timeout of a step left behind by a dead executor, then retries it", async () => {
    const clock = manualClock();
    const store = createMemoryEventStore();
    logBuilder("orphan", "orphan", clock.now())
      .created("w")
      .add("step_started", { step: "start", attempt: 1 })
      .writeTo(store);
    const { backend } = backendWith([twoSteps], { store, now: clock.now });
    expect(backend.recoverNow()).toBe(0);
    clock.advance(30_000);
    expect(backend.recoverNow()).toBe(1);
    const view = await backend.waitForTerminal("orphan");
    expect(shape(view.events).slice(1, 4)).toEqual([
      "step_started(start,1)",
      "step_failed(start,1,retryable)",
      "step_started(start,2)",
    ]);
    expect(view.events[2]?.payload).toMatchObject({ reason: "timeout" });
  });

  it("never touches a run it is executing or waiting to retry, even past the step timeout", async () => {
    const clock = manualClock();
    const hold = gate();
    const held = defineWorkflow("held", {
      start: async () => {
        await hold.promise;
        return { done: true };
      },
    });
    const waiting = defineWorkflow(
      "waiting",
      {
        start: async () => {
          throw new Error("later");
        },
      },
      { backoff: { initialMS: 3_600_000, maxMS: 3_600_000 } },
    );
    const { backend } = backendWith([held, waiting], { now: clock.now });
    const a = await backend.start("held", null, {});
    const b = await backend.start("waiting", null, {});
    await vi.waitFor(() => {
      expect(backend.store.lastEvent(a.runId)?.type).toBe("step_started");
      expect(backend.store.lastEvent(b.runId)?.type).toBe("step_failed");
    }, PROGRESS);
    clock.advance(60_000);
    expect(backend.recoverNow()).toBe(0);
    expect(backend.store.events(a.runId)).toHaveLength(2);
    expect(backend.store.events(b.runId)).toHaveLength(3);
    hold.open();
    expect((await backend.waitForTerminal(a.runId)).status).toBe("completed");
  });

  it("reports a run of an unregistered workflow once and leaves it alone", async () => {
    const store = createMemoryEventStore();
    logBuilder("lost").created("renamed").writeTo(store);
    const { backend, errors } = backendWith([twoSteps], { store });
    expect(backend.recoverNow()).toBe(0);
    expect(backend.recoverNow()).toBe(0);
    expect(errors).toEqual(['Workflow run lost cannot continue: workflow "renamed" is not registered']);
    expect(store.events("lost")).toHaveLength(1);
  });
});

describe("local backend: close()", () => {
  it("rejects pending waits, refuses new runs and stops scheduling", async () => {
    const hold = gate();
    const held = defineWorkflow("held", {
      start: async () => {
        await hold.promise;
        return { step: "next" };
      },
      next: async () => ({ done: true }),
    });
    const { backend } = backendWith([held]);
    const { runId } = await backend.start("held", null, {});
    const waiting = expect(backend.waitForTerminal(runId)).rejects.toMatchObject({ code: "not_ready" });
    await vi.waitFor(() => expect(backend.store.lastEvent(runId)?.type).toBe("step_started"), PROGRESS);
    await backend.close();
    await waiting;
    await expect(backend.start("held", null, {})).rejects.toBeInstanceOf(PlatformError);
    // The abandoned step finishing later commits its result but claims nothing more.
    hold.open();
    await vi.waitFor(() => expect(backend.store.lastEvent(runId)?.type).toBe("step_completed"), PROGRESS);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(shape(backend.store.events(runId))).toEqual([
      "workflow_created",
      "step_started(start,1)",
      "step_completed(start->next)",
    ]);
  });
});

describe("local backend: versions (beyond the spec)", () => {
  it("records the version of the code that started each run, and lists by it", async () => {
    const store = createMemoryEventStore();
    const v1 = backendWith([twoSteps], { store, version: "v1" }).backend;
    const first = await v1.start("w", null, {});
    await v1.waitForTerminal(first.runId);
    await v1.close();
    const v2 = backendWith([twoSteps], { store, version: "v2" }).backend;
    const second = await v2.start("w", null, {});
    const view = await v2.waitForTerminal(second.runId);
    expect(view.version).toBe("v2");
    expect(view.events[0]?.payload).toMatchObject({ version: "v2" });
    expect((await v2.get(first.runId))?.version).toBe("v1");
    expect((await v2.list({ version: "v1", limit: 10 })).runs.map((r) => r.id)).toEqual([first.runId]);
    expect((await v2.list({ version: "v2", limit: 10 })).runs.map((r) => r.id)).toEqual([second.runId]);
  });
});
