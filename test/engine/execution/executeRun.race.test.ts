import { describe, expect, it } from "vitest";
import { createRun } from "#src/engine/execution/createRun.ts";
import { defineWorkflow, type WorkflowSteps } from "#src/engine/api/definition.ts";
import { executeRun, type ExecuteRunResult } from "#src/engine/execution/executeRun.ts";
import { createMemoryEventStore } from "#src/engine/storage/memoryEventStore.ts";
import type { WorkflowEventStore } from "#src/engine/storage/store.ts";
import { gate, ONE_STEP_LOG, shape } from "#test/support/workflow/index.ts";

const RUN = "run-1";

/** A view of the store whose first full read returns only the first `keep` events, like a reader that lags behind. */
function laggingView(store: WorkflowEventStore, keep: (length: number) => number): WorkflowEventStore {
  let stale = true;
  return {
    lastEvent: (runId) => store.lastEvent(runId),
    createdEvent: (runId) => store.createdEvent(runId),
    events(runId, afterSeq) {
      const events = store.events(runId, afterSeq);
      if (!stale || afterSeq !== undefined) return events;
      stale = false;
      return events.slice(0, Math.max(1, keep(events.length)));
    },
    append: (events) => store.append(events),
    createRunIfNoActive: (created) => store.createRunIfNoActive(created),
    forgetRuns: (runIds) => store.forgetRuns(runIds),
    latestRunOf: (workflowId) => store.latestRunOf(workflowId),
    watchRun: (runId, watcherRunId) => store.watchRun(runId, watcherRunId),
    runWatchers: (runId) => store.runWatchers(runId),
  };
}

describe("two executors racing for the same run (a race, not an error)", () => {
  it("the loser of a claim finds its seq taken (a result, not an error), backs off, re-reads and leaves the step to the winner", async () => {
    const store = createMemoryEventStore();
    const hold = gate();
    let runs = 0;
    const definition = defineWorkflow("w", {
      start: async () => {
        runs++;
        await hold.promise;
        return { done: true, result: "once" };
      },
    });
    createRun(store, definition, null, { runId: RUN, now: Date.now() });
    const sleeps: number[] = [];
    const options = { now: Date.now, sleep: async (ms: number) => void sleeps.push(ms) };

    const winner = executeRun(store, definition, RUN, options);
    // The loser read the log before the winner's claim landed.
    const loser = await executeRun(
      laggingView(store, () => 1),
      definition,
      RUN,
      options,
    );

    expect(loser.status).toBe("in_flight");
    expect(sleeps).toHaveLength(1);
    hold.open();
    expect(await winner).toEqual({ status: "terminal" });
    expect(runs).toBe(1);
    expect(shape(store.events(RUN))).toEqual(ONE_STEP_LOG);
  });

  it("many executors with stale views: one step_started per seq, each step runs once, the run completes once", async () => {
    const store = createMemoryEventStore();
    const executions = new Map<string, number>();
    const steps: WorkflowSteps = {};
    const names = ["start", "b", "c", "d", "e", "f"];
    names.forEach((name, i) => {
      steps[name] = async (ctx) => {
        executions.set(name, (executions.get(name) ?? 0) + 1);
        await new Promise((resolve) => setTimeout(resolve, 1));
        ctx.write(name, i);
        const next = names[i + 1];
        return next ? { step: next } : { done: true, result: ctx.scratchpad };
      };
    });
    const definition = defineWorkflow("w", steps);
    createRun(store, definition, null, { runId: RUN, now: Date.now() });

    let conflicts = 0;
    // Each executor keeps going until the run is terminal, with a fresh stale view per execution.
    const executor = async (id: number) => {
      for (let round = 0; round < 500; round++) {
        const view = laggingView(store, (length) => Math.floor(Math.random() * (length + 1)));
        const result: ExecuteRunResult = await executeRun(view, definition, RUN, {
          now: Date.now,
          sleep: (ms) => {
            conflicts++;
            return new Promise((resolve) => setTimeout(resolve, Math.min(ms, 2)));
          },
        });
        if (result.status === "terminal") return;
        expect(result.status, `executor ${id}`).toBe("in_flight");
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      throw new Error(`executor ${id} never saw the run finish`);
    };
    await Promise.all([1, 2, 3, 4, 5].map(executor));

    // The race really happened: stale executors lost claims and backed off.
    expect(conflicts).toBeGreaterThan(0);
    const events = store.events(RUN);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.filter((e) => e.type === "workflow_completed")).toHaveLength(1);
    expect(shape(events).filter((s) => s.startsWith("step_started"))).toEqual(names.map((n) => `step_started(${n},1)`));
    expect([...executions.values()]).toEqual(names.map(() => 1));
    expect(events.at(-1)?.payload).toEqual({ result: { data: null, start: 0, b: 1, c: 2, d: 3, e: 4 } });
  });
});
