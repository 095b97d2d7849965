import { vi } from "vitest";
import { defineWorkflow, type WorkflowDefinition } from "#src/engine/api/definition.ts";
import type { StoredEvent } from "#src/engine/execution/events.ts";
import { createLocalWorkflowBackend, type LocalWorkflowBackendOptions } from "#src/engine/backends/localBackend.ts";
import { type FaultSwitch, faultSwitch, InjectedStorageFault } from "./storageFaults.ts";

/**
 * One seed of the engine under storage faults, whatever the store: runs of
 * four shapes (a chain of writes, a step that fails once, a wait that times
 * out, a rollback) are started and driven while the store's writes fail by
 * the seed's schedule, then the process "restarts" with faults off and
 * recovery finishes them. Answers what broke: every acknowledged start's run
 * must exist and end as its code says, each step's result committed once,
 * one terminal event last, no gap in seq. No Node or workerd imports, so
 * the Node stores' test and the Durable Object storage's test share it.
 */
const T0 = 1_800_000_000_000;
const definitions = new Map<string, WorkflowDefinition>(
  [
    defineWorkflow(
      "chain",
      {
        start: async (ctx) => {
          ctx.write("a", 1);
          return { step: "b" };
        },
        b: async (ctx) => {
          ctx.write("b", (ctx.scratchpad.a as number) + 1);
          return { step: "c" };
        },
        c: async (ctx) => ({ done: true, result: (ctx.scratchpad.b as number) * 10 }),
      },
      { backoff: { initialMS: 10, maxMS: 10, jitter: 0 }, maxAttempts: 100 },
    ),
    defineWorkflow(
      "flaky",
      {
        start: async (ctx) => {
          if (ctx.attempt === 1) throw new Error("first attempt fails");
          return { done: true, result: ctx.attempt };
        },
      },
      { backoff: { initialMS: 10, maxMS: 10, jitter: 0 }, maxAttempts: 100 },
    ),
    defineWorkflow(
      "waits",
      {
        start: async () => ({ step: "after", waitFor: "go", timeoutMS: 1_000 }),
        after: async (ctx) => ({ done: true, result: ctx.event === null ? "timed out" : "got it" }),
      },
      { backoff: { initialMS: 10, maxMS: 10, jitter: 0 }, maxAttempts: 100 },
    ),
    defineWorkflow(
      "undone",
      {
        start: async (ctx) => {
          ctx.write("held", true);
          return { step: "boom" };
        },
        boom: async () => {
          throw new Error("boom");
        },
      },
      {
        maxAttempts: 1,
        rollback: { start: async () => {} },
        rollbackOptions: { maxAttempts: 100, backoff: { initialMS: 10, maxMS: 10, jitter: 0 } },
      },
    ),
  ].map((definition) => [definition.name, definition]),
);

/** What each workflow's run ends with when nothing is lost or repeated. */
const EXPECTED: Record<string, { status: string; result?: unknown }> = {
  chain: { status: "completed", result: 20 },
  flaky: { status: "completed" },
  waits: { status: "completed", result: "timed out" },
  undone: { status: "failed" },
};

export type FaultedStore = LocalWorkflowBackendOptions["store"];

/**
 * The backend's timers are the test's (fake), like its clock: each tick moves them 1 ms on, the least a real
 * zero-delay timer takes, so the executions due then (zero-delay, or a retry's backoff come due) start, and
 * then lets their steps and every promise they wait on run. A tick costs no wall-clock wait (a real zero-delay
 * timer's millisecond, 50 and more of them per seed, was most of this test's time), and a seed plays out the
 * same way each time.
 */
async function ticks(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) {
    vi.advanceTimersByTime(1);
    await everyPromiseSettled();
  }
}

/** A turn of the real event loop (setImmediate is not faked): the microtasks queued before it have all run. */
const everyPromiseSettled = () => new Promise<void>((resolve) => setImmediate(resolve));

/** `close()` waits for running steps for at most its grace (0 ms here), on a timer: moved at once. */
async function closed(backend: { close(): Promise<void> }): Promise<void> {
  const closing = backend.close();
  vi.advanceTimersByTime(0);
  await closing;
}

/** Why a run's log breaks a promise (empty: it keeps them all). */
function brokenPromises(events: readonly StoredEvent[], workflow: string, result: unknown): string[] {
  const broken: string[] = [];
  events.forEach((event, i) => {
    if (event.seq !== i + 1) broken.push(`seq ${event.seq} at position ${i + 1}`);
  });
  const terminals = events.filter((e) =>
    ["workflow_completed", "workflow_failed", "workflow_cancelled"].includes(e.type),
  );
  if (terminals.length !== 1) broken.push(`${terminals.length} terminal events`);
  if (terminals[0] && terminals[0] !== events.at(-1)) broken.push("events after the terminal one");
  const completions = new Map<string, number>();
  for (const e of events)
    if (e.type === "step_completed") completions.set(e.payload.step, (completions.get(e.payload.step) ?? 0) + 1);
  for (const [step, count] of completions) if (count > 1) broken.push(`step ${step} committed ${count} times`);
  const rolledBack = events.filter((e) => e.type === "rollback_completed").length;
  if (rolledBack > 1) broken.push(`${rolledBack} rollbacks of one completion`);
  const expected = EXPECTED[workflow];
  const end = terminals[0];
  if (expected && end) {
    const status = end.type.replace("workflow_", "");
    if (status !== expected.status) broken.push(`ended ${status}, expected ${expected.status}`);
    if (
      "result" in expected &&
      end.type === "workflow_completed" &&
      JSON.stringify(result) !== JSON.stringify(expected.result)
    )
      broken.push(`result ${JSON.stringify(result)}, expected ${JSON.stringify(expected.result)}`);
  }
  return broken;
}

export async function runSeed(makeStore: (faults: FaultSwitch) => FaultedStore, seed: number): Promise<string[]> {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval"] });
  try {
    return await runSeedOnFakeTimers(makeStore, seed);
  } finally {
    vi.useRealTimers();
  }
}

async function runSeedOnFakeTimers(makeStore: (faults: FaultSwitch) => FaultedStore, seed: number): Promise<string[]> {
  const faults = faultSwitch(seed, 0);
  const store = makeStore(faults);
  let clock = T0;
  const open = () =>
    createLocalWorkflowBackend({
      store,
      definitions: (name) => definitions.get(name),
      now: () => clock,
      log: () => {},
      logError: () => {},
      closeGraceMS: 0,
    });
  let backend = open();
  faults.rate = 0.2;
  const acknowledged: string[] = [];
  const names = [...definitions.keys()];
  for (let i = 0; i < 8; i++) {
    try {
      acknowledged.push((await backend.start(names[i % names.length] as string, null, {})).runId);
    } catch (error) {
      // A start that failed says so with the storage's error; its run, if it landed, must still end well.
      if (!(error instanceof InjectedStorageFault)) throw error;
    }
  }
  for (let i = 0; i < 10; i++) {
    await ticks();
    clock += 300;
    try {
      backend.recoverNow();
    } catch (error) {
      if (!(error instanceof InjectedStorageFault)) throw error;
    }
  }
  // A restart with healthy storage: whatever the faults left half-way, recovery must finish.
  faults.rate = 0;
  await closed(backend);
  backend = open();
  backend.recoverAtStartup();
  for (let i = 0; i < 60 && store.activeRunIds().length > 0; i++) {
    // The clock moves on, the timers do not: a restart drops a wake-up timer set for a time to come.
    clock += 40_000;
    await closed(backend);
    backend = open();
    backend.recoverAtStartup();
    await ticks();
  }
  await closed(backend);
  const broken: string[] = [];
  const runs = store.listRuns({ limit: 100 }).runs;
  for (const runId of acknowledged)
    if (!runs.some((run) => run.id === runId)) broken.push(`acknowledged start ${runId} has no run`);
  for (const run of runs) {
    const events = store.events(run.id);
    const end = events.at(-1);
    const result = end?.type === "workflow_completed" ? end.payload.result : undefined;
    for (const problem of brokenPromises(events, run.name, result))
      broken.push(`${run.name} ${run.id}: ${problem} in ${events.map((e) => e.type).join(",")}`);
  }
  return broken;
}
