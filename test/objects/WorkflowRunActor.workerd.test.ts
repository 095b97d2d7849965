/**
 * The WorkflowRunActor itself: what only the Durable Object implementation
 * does (alarms, waiters, the per-project index, eviction, the recovery sweep
 * over the index, races on the actor's own SQLite). The behaviour every
 * backend shares is in workflowConformance.test.ts.
 */
import {
  abortAllDurableObjects,
  env,
  evictDurableObject,
  listDurableObjectIds,
  runDurableObjectAlarm,
  runInDurableObject,
} from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { workflowRunHost } from "#src/objects/workflowRunHost.ts";
import { durableObjectSql } from "#src/objects/durableObjectSql.ts";
import { runIndexOf } from "#src/objects/runIndexClient.ts";
import { workflowRunActor, type WorkflowActorEnv } from "#src/runtime/workflow/workflowActorClient.ts";
import { systemClock, type Clock } from "#src/engine/clock.ts";
import { createRun } from "#src/engine/createRun.ts";
import type { WorkflowDefinition } from "#src/engine/definition.ts";
import type { StoredEvent } from "#src/engine/events.ts";
import { executeRun, type ExecuteRunResult } from "#src/engine/executeRun.ts";
import { NonRetryableError } from "#src/engine/nonRetryableError.ts";
import { createSqlEventStore } from "#src/engine/sqlEventStore.ts";
import type { WorkflowEventStore } from "#src/engine/store.ts";
import {
  getWorkflowDefinition,
  installWorkflowBackend,
  resetWorkflowsForTests,
  workflow,
} from "#src/engine/workflowApi.ts";
import { durableObjectWorkflowBackend } from "#src/runtime/workflow/durableObjectBackend.ts";
import { sweepStuckRuns } from "#src/runtime/workflow/recoverySweep.ts";
import { PlatformError } from "#src/core/errors.ts";

const actorEnv = env as unknown as WorkflowActorEnv;

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/** type + step + attempt + reason + retryable of each event, for exact sequence assertions. */
function shape(events: readonly { type: string; payload: object }[]): string[] {
  return events.map(({ type, payload }) => {
    const p = payload as Record<string, unknown>;
    switch (type) {
      case "step_started":
        return `step_started(${p.step},${p.attempt})`;
      case "step_failed":
        return `step_failed(${p.step},${p.attempt},${p.reason},${p.retryable ? "retryable" : "final"})`;
      case "step_completed":
        return p.next_step === undefined ? `step_completed(${p.step})` : `step_completed(${p.step}->${p.next_step})`;
      default:
        return type;
    }
  });
}

/**
 * Spec rule 2, read back from a log: a step_completed without next_step is
 * followed by workflow_completed written in the same batch (same `at`), a
 * final step_failed by workflow_failed, and nothing follows a terminal event.
 * Also: no step completes twice, and seqs run 1, 2, 3, … without gaps.
 */
function expectWellFormed(events: readonly StoredEvent[], options: { repairedTerminal?: boolean } = {}): void {
  events.forEach((event, i) => {
    expect(event.seq).toBe(i + 1);
  });
  const completed = events.filter((e) => e.type === "step_completed").map((e) => e.payload.step);
  expect(new Set(completed).size, `a step completed twice: ${completed.join(", ")}`).toBe(completed.length);
  events.forEach((event, i) => {
    const next = events[i + 1];
    // A log planted without its terminal event (stuck_terminal) gets it later, from recovery.
    const sameBatch = options.repairedTerminal ? {} : { at: event.at };
    if (event.type === "step_completed" && event.payload.next_step === undefined) {
      expect(next).toMatchObject({ type: "workflow_completed", ...sameBatch });
    }
    if (event.type === "step_failed" && !event.payload.retryable) {
      expect(next).toMatchObject({ type: "workflow_failed", ...sameBatch });
    }
    if (event.type === "workflow_completed" || event.type === "workflow_failed") expect(next).toBeUndefined();
  });
}

function actorIdOf(runId: string): DurableObjectId {
  return env.WORKFLOW_RUNS.idFromString(runId.split(".")[0]!);
}

function stubOf(runId: string) {
  return env.WORKFLOW_RUNS.get(actorIdOf(runId));
}

function actorNamed(workflowId: string) {
  return env.WORKFLOW_RUNS.get(env.WORKFLOW_RUNS.idFromName(workflowId));
}

/** Reads a run's log straight from its actor's SQLite, without calling the actor. */
function actorLog(runId: string): Promise<StoredEvent[]> {
  return runInDurableObject(stubOf(runId), (_instance, state) =>
    createSqlEventStore(durableObjectSql(state.storage)).events(runId),
  );
}

function actorAlarm(runId: string): Promise<number | null> {
  return runInDurableObject(stubOf(runId), (_instance, state) => state.storage.getAlarm());
}

async function waitForLog(
  runId: string,
  check: (events: StoredEvent[]) => boolean,
  timeout = 5000,
): Promise<StoredEvent[]> {
  let events: StoredEvent[] = [];
  await vi.waitFor(
    async () => {
      events = await actorLog(runId);
      if (!check(events)) throw new Error(`log not there yet: ${shape(events).join(", ")}`);
    },
    { timeout, interval: 20 },
  );
  return events;
}

const isTerminal = (events: StoredEvent[]) =>
  ["workflow_completed", "workflow_failed"].includes(events.at(-1)?.type ?? "");

function settled<T>(promise: Promise<T>): Promise<"settled" | "pending"> {
  return Promise.race([
    promise.then(() => "settled" as const),
    new Promise<"pending">((resolve) => setTimeout(() => resolve("pending"), 100)),
  ]);
}

async function rejection(promise: Promise<unknown>): Promise<PlatformError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof PlatformError) return error;
    throw error;
  }
  throw new Error("expected a rejection");
}

function definition(name: string): WorkflowDefinition {
  const found = getWorkflowDefinition(name);
  if (!found) throw new Error(`workflow ${name} is not registered`);
  return found;
}

// Steps that call passGate wait until the test opens their gate (keyed by workflow id). A test
// creates the gate before starting the run: a promise made inside an actor and resolved from
// the test would resume the step in the test's I/O context, where the actor's storage is out
// of reach ("Cannot perform I/O on behalf of a different Durable Object").
const gates = new Map<string, { promise: Promise<void>; open: () => void }>();
function gateFor(id: string) {
  let entry = gates.get(id);
  if (!entry) {
    let open!: () => void;
    const promise = new Promise<void>((resolve) => {
      open = resolve;
    });
    entry = { promise, open };
    gates.set(id, entry);
  }
  return entry;
}

/** The gate of a step's run, which the test must have created before starting it. */
function passGate(workflowId: string): Promise<void> {
  const gate = gates.get(workflowId);
  if (!gate) throw new NonRetryableError(`test bug: no gate for ${workflowId}; create it before the run starts`);
  return gate.promise;
}

/**
 * Shapes several describes need, each registered under the describe's own name: a run that
 * waits at its gate in `start` (stepTimeoutMS 10 s), one whose `start` records its attempt
 * (2 attempts, 10 ms backoff, stepTimeoutMS 1 s), one that fails for good at once, and one
 * that completes at once with "other".
 */
function registerGated(name: string): void {
  workflow(
    name,
    {
      start: async (ctx) => {
        note(ctx);
        ctx.write("opened", true);
        await passGate(ctx.workflowId);
        return { step: "finish" };
      },
      finish: async (ctx) => {
        note(ctx);
        return { done: true, result: { data: ctx.data, opened: ctx.scratchpad.opened } };
      },
    },
    { stepTimeoutMS: 10_000 },
  );
}

function registerRecoverable(name: string): void {
  workflow(
    name,
    {
      start: async (ctx) => {
        note(ctx);
        ctx.write("n", ctx.attempt);
        return { step: "finish" };
      },
      finish: async (ctx) => {
        note(ctx);
        return { done: true, result: { n: ctx.scratchpad.n } };
      },
    },
    { maxAttempts: 2, backoff: { initialMS: 10, jitter: 0 }, stepTimeoutMS: 1000 },
  );
}

function registerFatal(name: string): void {
  workflow(name, {
    start: async () => {
      throw new NonRetryableError("card declined");
    },
  });
}

function registerOther(name: string): void {
  workflow(name, { start: async () => ({ done: true, result: "other" }) });
}

/** The log of a gated or recoverable run that went start → finish without a failure. */
const startFinishLog = [
  "workflow_created",
  "step_started(start,1)",
  "step_completed(start->finish)",
  "step_started(finish,1)",
  "step_completed(finish)",
  "workflow_completed",
];

/** Step invocations as "<workflowId>:<step>#<attempt>", in order. */
const invocations: string[] = [];

type StepCall = { workflowId: string; step: string; attempt: number };
/** Called first by every step that the tests follow through `invocations`. */
function note(ctx: StepCall): void {
  invocations.push(`${ctx.workflowId}:${ctx.step}#${ctx.attempt}`);
}

/** Simulated time added to the actors' clock (the step-loop budget tests). */
let clockOffset = 0;
/** The clock the actors are given (see beforeEach), and the one this file plants events with. */
const testClock: Clock = () => systemClock() + clockOffset;

// Each describe registers its own workflows (named "<describe>.<role>") in its beforeEach.
beforeEach(() => {
  resetWorkflowsForTests();
  gates.clear();
  invocations.length = 0;
  clockOffset = 0;
  workflowRunHost.clock = testClock;
  installWorkflowBackend(durableObjectWorkflowBackend(actorEnv));
});

afterEach(() => {
  vi.restoreAllMocks();
  workflowRunHost.clock = systemClock;
  for (const gate of gates.values()) gate.open();
});

// ---------------------------------------------------------------------------

describe("WorkflowRunActor: alarms, waiters and the run index", () => {
  beforeEach(() => {
    registerGated("alarms.gated");
    registerRecoverable("alarms.recoverable");
    registerFatal("alarms.fatal");
    registerOther("alarms.other");
  });

  it("start arms the alarm and the run completes with no further call; waitForTerminal wakes on the terminal event; the index goes running → completed", async () => {
    gateFor("alarm-1");
    const run = await workflow.start("alarms.gated", { order: 42 }, { id: "alarm-1" });
    expect(run).toMatchObject({ workflowId: "alarm-1", created: true });
    expect(run.id).toMatch(/^[0-9a-f]{64}\.[a-z0-9]{12}$/);
    expect(actorIdOf(run.id).equals(env.WORKFLOW_RUNS.idFromName("alarm-1"))).toBe(true);

    // Nothing but the actor's own alarm can have claimed the first step.
    const started = await waitForLog(run.id, (events) => events.at(-1)?.type === "step_started");
    expect(shape(started)).toEqual(["workflow_created", "step_started(start,1)"]);
    expect(await runIndexOf(actorEnv).get(run.id)).toMatchObject({
      id: run.id,
      workflowId: "alarm-1",
      name: "alarms.gated",
      status: "running",
    });

    // A waiter with a long slice: only the terminal event can answer it in time.
    const actor = workflowRunActor(actorEnv, actorIdOf(run.id));
    const waiting = actor.waitForTerminal(run.id, 60_000);
    expect(await settled(waiting)).toBe("pending");
    gateFor("alarm-1").open();
    // Woken by the terminal write with the ended run: the slice running out would answer null
    // (after 60 s, far past this test's timeout).
    const view = await waiting;
    expect(view?.status).toBe("completed");
    expect(view?.result).toEqual({ data: { order: 42 }, opened: true });
    expect(view?.events.at(-1)?.type).toBe("workflow_completed");

    const events = await actorLog(run.id);
    expect(shape(events)).toEqual(startFinishLog);
    expectWellFormed(events);
    expect(view?.events).toHaveLength(events.length);
    expect(invocations).toEqual(["alarm-1:start#1", "alarm-1:finish#1"]);

    await vi.waitFor(async () => expect(await runIndexOf(actorEnv).get(run.id)).toMatchObject({ status: "completed" }));
    expect(await runIndexOf(actorEnv).get(run.id)).toEqual({
      id: run.id,
      workflowId: "alarm-1",
      name: "alarms.gated",
      status: "completed",
      step: "finish",
      createdAt: events[0]!.at,
      updatedAt: events.at(-1)!.at,
      // Kept the default 30 days after it ended.
      expiresAt: events.at(-1)!.at + 30 * 24 * 60 * 60 * 1000,
    });
    // Nothing is left scheduled for a finished run.
    expect(await actorAlarm(run.id)).toBeNull();
  });

  it("a run whose steps need no I/O ends within start: nothing was ever scheduled, start's answer carries the outcome and the summary the caller indexes", async () => {
    const actor = workflowRunActor(actorEnv, env.WORKFLOW_RUNS.idFromName("quick-1"));
    const started = await actor.start({
      runId: `${env.WORKFLOW_RUNS.idFromName("quick-1")}.quick0000001`,
      workflowId: "quick-1",
      name: "alarms.recoverable",
      data: null,
    });
    const events = await actorLog(started.runId);
    expect(started).toEqual({
      runId: expect.any(String),
      workflowId: "quick-1",
      created: true,
      outcome: { status: "completed", result: { n: 1 } },
      summary: {
        id: started.runId,
        workflowId: "quick-1",
        name: "alarms.recoverable",
        status: "completed",
        step: "finish",
        createdAt: events[0]!.at,
        updatedAt: events.at(-1)!.at,
        expiresAt: events.at(-1)!.at + 30 * 24 * 60 * 60 * 1000,
        lastSeq: events.at(-1)!.seq,
      },
    });
    expect(shape(events)).toEqual(startFinishLog);
    expect(await actorAlarm(started.runId)).toBeNull();
    // The actor leaves indexing a run it answers for to its caller (workflow.start batches those reports).
    expect(await runIndexOf(actorEnv).get(started.runId)).toBeNull();

    // Through workflow.start: result() settles from the outcome (a failure keeps its reason and cause).
    const failed = await workflow.start("alarms.fatal", null, { id: "quick-2" });
    const error = await rejection(failed.result());
    expect(error).toMatchObject({
      code: "workflow_failed",
      message: "card declined",
      details: { runId: failed.id, cause: "non_retryable" },
    });
    // Indexed by the time workflow.start answered: no waiting.
    expect(await runIndexOf(actorEnv).get(failed.id)).toMatchObject({ status: "failed" });
    // A handle for a run still going has no outcome and asks the actor.
    gateFor("quick-3");
    const open = await workflow.start("alarms.gated", "q", { id: "quick-3" });
    expect(await runIndexOf(actorEnv).get(open.id)).toMatchObject({ status: "running" });
    gateFor("quick-3").open();
    await expect(open.result()).resolves.toEqual({ data: "q", opened: true });
  });

  it("waitForTerminal answers a finished run at once, null after its slice for a running one, not_found for an unknown one", async () => {
    const done = await workflow.start("alarms.other", null, { id: "wait-1" });
    const doneActor = workflowRunActor(actorEnv, actorIdOf(done.id));
    await waitForLog(done.id, isTerminal);
    expect(await doneActor.waitForTerminal(done.id, 60_000)).toMatchObject({ status: "completed", result: "other" });

    gateFor("wait-2");
    const open = await workflow.start("alarms.gated", null, { id: "wait-2" });
    const openActor = workflowRunActor(actorEnv, actorIdOf(open.id));
    expect(await openActor.waitForTerminal(open.id, 30)).toBeNull();

    const error = await rejection(openActor.waitForTerminal(`${actorIdOf(open.id)}.zzzzzzzzzzzz`, 30));
    expect(error.code).toBe("not_found");
  });

  it("a failing run wakes its waiter with the failure and is indexed as failed", async () => {
    const run = await workflow.start("alarms.fatal", null, { id: "fatal-1" });
    const view = await workflowRunActor(actorEnv, actorIdOf(run.id)).waitForTerminal(run.id, 60_000);
    expect(view).toMatchObject({ status: "failed", error: "card declined" });
    expect(shape(view?.events ?? [])).toEqual([
      "workflow_created",
      "step_started(start,1)",
      "step_failed(start,1,card declined,final)",
      "workflow_failed",
    ]);
    expectWellFormed(await actorLog(run.id));
    await vi.waitFor(async () => expect(await runIndexOf(actorEnv).get(run.id)).toMatchObject({ status: "failed" }));
  });

  it("execute runs (or joins) the step loop and answers done; an unknown run of an existing actor is not_found", async () => {
    const run = await workflow.start("alarms.recoverable", null, { id: "exec-1" });
    const actor = workflowRunActor(actorEnv, actorIdOf(run.id));
    expect(await actor.execute(run.id)).toEqual({ done: true });
    expect(await actor.execute(run.id)).toEqual({ done: true });
    const events = await actorLog(run.id);
    expect(shape(events)).toEqual(startFinishLog);
    expect(invocations).toEqual(["exec-1:start#1", "exec-1:finish#1"]);
    expect((await rejection(actor.execute(`${actorIdOf(run.id)}.zzzzzzzzzzzz`))).code).toBe("not_found");
  });
});

describe("WorkflowRunActor: the 50-second step-loop budget", () => {
  // Each step "works" 20 seconds on the test clock: a 50 s budget fits three claims.
  const slowStep = (next: string | null) => async (ctx: StepCall) => {
    note(ctx);
    clockOffset += 20_000;
    return next === null ? { done: true as const, result: "marathon done" } : { step: next };
  };
  /** Claims at 0 s, 20 s and 40 s on the test clock; at 60 s the budget is spent. */
  const firstInvocationLog = [
    "workflow_created",
    "step_started(start,1)",
    "step_completed(start->s2)",
    "step_started(s2,1)",
    "step_completed(s2->s3)",
    "step_started(s3,1)",
    "step_completed(s3->s4)",
  ];
  const marathonLog = [
    ...firstInvocationLog,
    "step_started(s4,1)",
    "step_completed(s4->s5)",
    "step_started(s5,1)",
    "step_completed(s5)",
    "workflow_completed",
  ];
  const marathonInvocations = (workflowId: string) =>
    ["start", "s2", "s3", "s4", "s5"].map((step) => `${workflowId}:${step}#1`);
  beforeEach(() => {
    workflow("budget.marathon", {
      start: slowStep("s2"),
      s2: slowStep("s3"),
      s3: slowStep("s4"),
      s4: slowStep("s5"),
      s5: slowStep(null),
    });
  });

  it("executeRun on the actor's store stops claiming at budgetMS; a fresh execution finishes with every step completed once", async () => {
    const actor = actorNamed("budget-1");
    const runId = `${env.WORKFLOW_RUNS.idFromName("budget-1")}.budget000001`;
    const first = await runInDurableObject(actor, async (_instance, state) => {
      const store = createSqlEventStore(durableObjectSql(state.storage));
      createRun(store, definition("budget.marathon"), null, { runId, workflowId: "budget-1", now: testClock() });
      const result = await executeRun(store, definition("budget.marathon"), runId, {
        now: testClock,
        budgetMS: 50_000,
      });
      return { result, events: store.events(runId) };
    });
    expect(first.result).toEqual({ status: "budget_exhausted" });
    // It stopped between steps: the last step it claimed is committed, the next one unclaimed.
    expect(shape(first.events)).toEqual(firstInvocationLog);

    // The queue's next execute lands in a fresh invocation and continues from the log.
    expect(await workflowRunActor(actorEnv, actor.id).execute(runId)).toEqual({ done: true });
    const events = await actorLog(runId);
    expect(shape(events)).toEqual(marathonLog);
    expectWellFormed(events);
    expect(invocations).toEqual(marathonInvocations("budget-1"));
  });

  it("inside the actor: the budget ends one invocation, the alarm continues in a fresh instance, every step completes once", async () => {
    // Each step of "budget.marathon" advances the test clock, which the actor reads, by 20 s.
    const run = await workflow.start("budget.marathon", null, { id: "budget-2" });
    const stub = stubOf(run.id);
    // First invocation (the start alarm): claims at 0 s, 20 s, 40 s; at 60 s the budget is spent.
    const cut = await waitForLog(run.id, (events) => shape(events).includes("step_completed(s3->s4)"));
    // Armed for "now" on the actor's clock (60 simulated seconds ahead), to continue in a fresh invocation.
    await vi.waitFor(async () => expect((await actorAlarm(run.id)) ?? 0).toBeGreaterThanOrEqual(cut.at(-1)!.at));
    expect(shape(await actorLog(run.id))).toEqual(firstInvocationLog);
    expect(cut.at(-1)!.at - cut[1]!.at).toBeGreaterThanOrEqual(60_000);
    expect((await actorAlarm(run.id))! - systemClock()).toBeGreaterThan(50_000);

    const before = await runInDurableObject(stub, (instance) => instance);
    await evictDurableObject(stub);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await runInDurableObject(stub, (instance) => instance)).not.toBe(before);

    const events = await actorLog(run.id);
    expect(shape(events)).toEqual(marathonLog);
    expectWellFormed(events);
    expect(invocations).toEqual(marathonInvocations("budget-2"));
    expect(await workflow.get(run.id)).toMatchObject({ status: "completed", result: "marathon done" });
  });
});

describe("WorkflowRunActor: eviction and crashes mid-run", () => {
  beforeEach(() => {
    registerGated("crash.gated");
    workflow(
      "crash.backoff-then-done",
      {
        start: async (ctx) => {
          note(ctx);
          if (ctx.attempt === 1) throw new Error("first try fails");
          return { done: true, result: ctx.attempt };
        },
      },
      { backoff: { initialMS: 300, jitter: 0 } },
    );
    const orphan = {
      start: async (ctx: StepCall) => {
        note(ctx);
        return { step: "hang" };
      },
      // Attempt 1 never settles (its executor dies with it); attempt 2 answers at once.
      hang: async (ctx: StepCall) => {
        note(ctx);
        if (ctx.attempt === 1) await new Promise<never>(() => {});
        return { step: "finish" };
      },
      finish: async (ctx: StepCall) => {
        note(ctx);
        return { done: true as const, result: "recovered" };
      },
    };
    // A step timeout of a minute: a test passes in time only if the interruption is recorded at once.
    workflow("crash.orphan.slow", orphan, { stepTimeoutMS: 60_000, backoff: { initialMS: 10, jitter: 0 } });
    workflow("crash.orphan.last", orphan, { stepTimeoutMS: 60_000, maxAttempts: 1 });
  });

  it("a graceful eviction waits for the step in flight; the run then continues from storage in a fresh instance", async () => {
    gateFor("evict-1");
    const run = await workflow.start("crash.gated", "e", { id: "evict-1" });
    const stub = stubOf(run.id);
    await waitForLog(run.id, (events) => events.at(-1)?.type === "step_started");
    const before = await runInDurableObject(stub, (instance) => instance);

    // evictDurableObject drains in-flight work first: it cannot orphan the awaiting step.
    const evicting = evictDurableObject(stub);
    expect(await settled(evicting)).toBe("pending");
    expect(shape(await actorLog(run.id))).toEqual(["workflow_created", "step_started(start,1)"]);
    gateFor("evict-1").open();
    await evicting;

    expect(await runInDurableObject(stub, (instance) => instance)).not.toBe(before);
    const events = await actorLog(run.id);
    expect(shape(events)).toEqual(startFinishLog);
    expectWellFormed(events);
    expect(await workflow.get(run.id)).toMatchObject({ status: "completed", result: { data: "e", opened: true } });
  });

  it("evicted while waiting out a retry backoff: the alarm wakes a fresh instance that retries and completes", async () => {
    const run = await workflow.start("crash.backoff-then-done", null, { id: "evict-2" });
    const stub = stubOf(run.id);
    await waitForLog(run.id, (events) => events.at(-1)?.type === "step_failed");
    const before = await runInDurableObject(stub, (instance) => instance);
    await evictDurableObject(stub);
    const events = await waitForLog(run.id, isTerminal);
    expect(await runInDurableObject(stub, (instance) => instance)).not.toBe(before);
    expect(shape(events)).toEqual([
      "workflow_created",
      "step_started(start,1)",
      "step_failed(start,1,first try fails,retryable)",
      "step_started(start,2)",
      "step_completed(start)",
      "workflow_completed",
    ]);
    expect(events[3]!.at - events[2]!.at).toBeGreaterThanOrEqual(300);
    expectWellFormed(events);
  });

  const interruptedShape = [
    "workflow_created",
    "step_started(start,1)",
    "step_completed(start->hang)",
    "step_started(hang,1)",
    "step_failed(hang,1,interrupted,retryable)",
    "step_started(hang,2)",
    "step_completed(hang->finish)",
    "step_started(finish,1)",
    "step_completed(finish)",
    "workflow_completed",
  ];

  it("crashed mid-step: the restarted actor records the orphaned attempt at once as step_failed{interrupted} (no wait for stepTimeoutMS), retries it, and the run completes", async () => {
    const run = await workflow.start("crash.orphan.slow", null, { id: "crash-1" });
    await waitForLog(run.id, (events) => shape(events).at(-1) === "step_started(hang,1)");
    // A hard reset, as a deploy or a machine loss would do: the in-memory execution is gone.
    await abortAllDurableObjects();
    // The first touch starts a fresh instance, which cannot be running that attempt: a Durable Object is single-instance.
    const events = await waitForLog(run.id, isTerminal);
    expect(shape(events)).toEqual(interruptedShape);
    expect(events[4]!.payload).toEqual({ step: "hang", attempt: 1, reason: "interrupted", retryable: true });
    expectWellFormed(events);
    expect(invocations).toEqual(["crash-1:start#1", "crash-1:hang#1", "crash-1:hang#2", "crash-1:finish#1"]);
    expect(await workflow.get(run.id)).toMatchObject({ status: "completed", result: "recovered" });
  });

  it("crashed mid-step in its first execution, and nothing touches the actor again: the alarm armed before the step waited revives it", async () => {
    const run = await workflow.start("crash.orphan.slow", null, { id: "crash-untouched" });
    await waitForLog(run.id, (events) => shape(events).at(-1) === "step_started(hang,1)");
    await abortAllDurableObjects();
    // Only the index is read from here on: the run actor is not called, so only its alarm can restart it.
    await vi.waitFor(
      async () => expect(await runIndexOf(actorEnv).get(run.id)).toMatchObject({ status: "completed" }),
      { timeout: 20_000, interval: 100 },
    );
    expect(shape(await actorLog(run.id))).toEqual(interruptedShape);
  }, 30_000);

  it("crashed mid-step on its last attempt: the interruption fails the run at once and the index hears of it", async () => {
    const run = await workflow.start("crash.orphan.last", null, { id: "crash-last" });
    await waitForLog(run.id, (events) => shape(events).at(-1) === "step_started(hang,1)");
    await abortAllDurableObjects();
    const events = await waitForLog(run.id, isTerminal);
    expect(shape(events).slice(3)).toEqual([
      "step_started(hang,1)",
      "step_failed(hang,1,interrupted,final)",
      "workflow_failed",
    ]);
    expect(events.at(-1)!.payload).toEqual({ reason: "interrupted", cause: "attempts_exhausted" });
    await vi.waitFor(async () => expect(await runIndexOf(actorEnv).get(run.id)).toMatchObject({ status: "failed" }));
  });

  it("crashed mid-step, its alarm lost too: the interruption is recorded at once and the sweep re-enqueues the retry", async () => {
    const run = await workflow.start("crash.orphan.slow", null, { id: "crash-2" });
    await waitForLog(run.id, (events) => shape(events).at(-1) === "step_started(hang,1)");
    await abortAllDurableObjects();
    // The fresh instance records the interruption and arms its alarm before anything else reaches it; lose that alarm.
    await runInDurableObject(stubOf(run.id), (_instance, state) => state.storage.deleteAlarm());
    expect(shape(await actorLog(run.id)).at(-1)).toBe("step_failed(hang,1,interrupted,retryable)");
    expect(await sweepStuckRuns(actorEnv)).toBe("Re-enqueued 1 workflow(s)");
    const events = await waitForLog(run.id, isTerminal);
    expect(shape(events)).toEqual(interruptedShape);
    expectWellFormed(events);
    expect(invocations).toEqual(["crash-2:start#1", "crash-2:hang#1", "crash-2:hang#2", "crash-2:finish#1"]);
  });

  it("crashed mid-step and first reached by the recovery sweep (as `platform dev` sweeps at start-up): the sweep's touch restarts the actor, which records the interruption and drives the run on", async () => {
    const run = await workflow.start("crash.orphan.slow", null, { id: "crash-3" });
    await waitForLog(run.id, (events) => shape(events).at(-1) === "step_started(hang,1)");
    await abortAllDurableObjects();
    // Driven by the alarm the fresh instance armed, not re-enqueued by the sweep.
    expect(await sweepStuckRuns(actorEnv)).toBe("Re-enqueued 0 workflow(s)");
    const events = await waitForLog(run.id, isTerminal);
    expect(shape(events)).toEqual(interruptedShape);
    expectWellFormed(events);
    expect(invocations).toEqual(["crash-3:start#1", "crash-3:hang#1", "crash-3:hang#2", "crash-3:finish#1"]);
  });
});

describe("WorkflowRunActor: the recovery sweep over the index", () => {
  beforeEach(() => {
    registerGated("sweep.gated");
    registerRecoverable("sweep.recoverable");
    workflow(
      "sweep.patient",
      {
        start: async (ctx) => {
          note(ctx);
          throw new Error("not yet");
        },
      },
      { backoff: { initialMS: 60_000, maxMS: 60_000, jitter: 0 } },
    );
    registerOther("sweep.other");
  });

  const T_OLD = () => testClock() - 60_000;

  /** Writes a run's log straight into the actor's SQLite and records it in the index, as a crashed executor would leave it. */
  async function plant(
    workflowId: string,
    name: string,
    rest: { type: StoredEvent["type"]; payload: object; at?: number }[],
  ): Promise<string> {
    const actor = actorNamed(workflowId);
    const runId = `${actor.id}.planted00000`;
    const summary = await runInDurableObject(actor, (_instance, state) => {
      const store = createSqlEventStore(durableObjectSql(state.storage));
      const at = T_OLD();
      store.createRunIfNoActive({
        runId,
        workflowId,
        seq: 1,
        type: "workflow_created",
        payload: { workflowName: name, writes: { data: null } },
        at,
      });
      const events = rest.map(
        (event, i) => ({ ...event, runId, workflowId, seq: i + 2, at: event.at ?? at }) as StoredEvent,
      );
      if (events.length) store.append(events);
      return store.getReport(runId)!;
    });
    await runIndexOf(actorEnv).record([summary]);
    return runId;
  }

  it("finds each stuck reason, repairs it, re-enqueues the runs that need an executor and logs their number; all end with the spec's sequence", {
    timeout: 15_000,
  }, async () => {
    const started = (step: string, attempt: number, at?: number) => ({
      type: "step_started" as const,
      payload: { step, attempt },
      at,
    });
    const runs = {
      stuck_created: await plant("stuck-created", "sweep.recoverable", []),
      stuck_completed: await plant("stuck-completed", "sweep.recoverable", [
        started("start", 1),
        { type: "step_completed", payload: { step: "start", writes: { n: 7 }, next_step: "finish" } },
      ]),
      stuck_failed: await plant("stuck-failed", "sweep.recoverable", [
        started("start", 1),
        { type: "step_failed", payload: { step: "start", attempt: 1, reason: "boom", retryable: true } },
      ]),
      timeout: await plant("timed-out", "sweep.recoverable", [started("start", 1)]),
      timeout_exhausted: await plant("timed-out-last", "sweep.recoverable", [
        started("start", 1),
        { type: "step_failed", payload: { step: "start", attempt: 1, reason: "boom", retryable: true } },
        started("start", 2),
      ]),
      stuck_terminal_completed: await plant("terminal-completed", "sweep.recoverable", [
        started("start", 1),
        { type: "step_completed", payload: { step: "start", writes: { n: 1 }, next_step: "finish" } },
        started("finish", 1),
        { type: "step_completed", payload: { step: "finish", writes: {} } },
      ]),
      stuck_terminal_failed: await plant("terminal-failed", "sweep.recoverable", [
        started("start", 1),
        { type: "step_failed", payload: { step: "start", attempt: 1, reason: "card declined", retryable: false } },
      ]),
      // A step_started inside its stepTimeoutMS (10 s for "sweep.gated") is not stuck: its executor may be alive.
      fresh_step: await plant("fresh-step", "sweep.gated", [started("start", 1, testClock())]),
    };
    // Healthy runs the sweep must leave alone: one executing right now, one waiting out a 60 s backoff on its alarm.
    gateFor("executing-now");
    const executing = await workflow.start("sweep.gated", null, { id: "executing-now" });
    const waiting = await workflow.start("sweep.patient", null, { id: "waiting-retry" });
    await waitForLog(executing.id, (events) => events.at(-1)?.type === "step_started");
    await waitForLog(waiting.id, (events) => events.at(-1)?.type === "step_failed");
    const finished = await workflow.start("sweep.other", null, { id: "finished" });
    await waitForLog(finished.id, isTerminal);

    // Re-enqueued: stuck_created, stuck_completed, stuck_failed, timeout. The two stuck_terminal runs and the
    // timed-out last attempt are ended by recovery itself (terminal event written, nothing to enqueue).
    expect(await sweepStuckRuns(actorEnv)).toBe("Re-enqueued 4 workflow(s)");

    const logs = Object.fromEntries(
      await Promise.all(
        Object.entries(runs)
          .filter(([key]) => key !== "fresh_step")
          .map(async ([key, runId]) => [key, shape(await waitForLog(runId, isTerminal))]),
      ),
    );
    const tail = ["step_started(finish,1)", "step_completed(finish)", "workflow_completed"];
    expect(logs).toEqual({
      stuck_created: startFinishLog,
      stuck_completed: startFinishLog,
      stuck_failed: [
        "workflow_created",
        "step_started(start,1)",
        "step_failed(start,1,boom,retryable)",
        "step_started(start,2)",
        "step_completed(start->finish)",
        ...tail,
      ],
      timeout: [
        "workflow_created",
        "step_started(start,1)",
        "step_failed(start,1,timeout,retryable)",
        "step_started(start,2)",
        "step_completed(start->finish)",
        ...tail,
      ],
      timeout_exhausted: [
        "workflow_created",
        "step_started(start,1)",
        "step_failed(start,1,boom,retryable)",
        "step_started(start,2)",
        "step_failed(start,2,timeout,final)",
        "workflow_failed",
      ],
      stuck_terminal_completed: startFinishLog,
      stuck_terminal_failed: [
        "workflow_created",
        "step_started(start,1)",
        "step_failed(start,1,card declined,final)",
        "workflow_failed",
      ],
    });
    for (const [key, runId] of Object.entries(runs))
      expectWellFormed(await actorLog(runId), { repairedTerminal: key.startsWith("stuck_terminal") });
    expect((await workflow.get(runs.stuck_completed))?.result).toEqual({ n: 7 });
    expect((await workflow.get(runs.timeout_exhausted))?.events.at(-1)?.payload).toEqual({
      reason: "timeout",
      cause: "attempts_exhausted",
    });
    expect((await workflow.get(runs.stuck_terminal_completed))?.result).toBeNull();
    expect((await workflow.get(runs.stuck_terminal_failed))?.events.at(-1)?.payload).toEqual({
      reason: "card declined",
      cause: "non_retryable",
    });

    // The healthy runs were not touched.
    expect(shape(await actorLog(runs.fresh_step))).toEqual(["workflow_created", "step_started(start,1)"]);
    expect(shape(await actorLog(executing.id))).toEqual(["workflow_created", "step_started(start,1)"]);
    expect(shape(await actorLog(waiting.id))).toEqual([
      "workflow_created",
      "step_started(start,1)",
      "step_failed(start,1,not yet,retryable)",
    ]);
    expect(invocations.filter((i) => i.startsWith("executing-now") || i.startsWith("waiting-retry"))).toEqual([
      "executing-now:start#1",
      "waiting-retry:start#1",
    ]);

    // The index followed every repair.
    const index = runIndexOf(actorEnv);
    for (const key of [
      "stuck_created",
      "stuck_completed",
      "stuck_failed",
      "timeout",
      "stuck_terminal_completed",
    ] as const) {
      await vi.waitFor(async () => expect((await index.get(runs[key]))?.status).toBe("completed"));
    }
    for (const key of ["timeout_exhausted", "stuck_terminal_failed"] as const)
      expect((await index.get(runs[key]))?.status).toBe("failed");
    expect(new Set(await index.activeRunIds())).toEqual(new Set([runs.fresh_step, executing.id, waiting.id]));

    // Nothing stuck is left.
    expect(await sweepStuckRuns(actorEnv)).toBe("Re-enqueued 0 workflow(s)");
  });

  it("a run whose workflow is no longer registered is reported and left alone; the sweep goes on", async () => {
    const lost = await plant("lost-1", "renamed-away", []);
    const stuck = await plant("stuck-2", "sweep.recoverable", []);
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    expect(await sweepStuckRuns(actorEnv)).toBe("Re-enqueued 1 workflow(s)");
    expect(errors).toHaveBeenCalledWith(
      `workflow recovery: run ${lost}:`,
      expect.objectContaining({ code: "unknown_workflow" }),
    );
    expect(shape(await actorLog(lost))).toEqual(["workflow_created"]);
    expect(shape(await waitForLog(stuck, isTerminal)).at(-1)).toBe("workflow_completed");
  });
});

describe("WorkflowRunActor: two executors racing on the actor's store", () => {
  // Every step takes a little real time, so two executors racing on one run overlap.
  const relayStep = (next: string | null) => async (ctx: StepCall) => {
    note(ctx);
    await new Promise((resolve) => setTimeout(resolve, 5));
    return next === null ? { done: true as const, result: "relay done" } : { step: next };
  };
  beforeEach(() => {
    workflow(
      "race.relay",
      { start: relayStep("r2"), r2: relayStep("r3"), r3: relayStep("r4"), r4: relayStep("r5"), r5: relayStep(null) },
      { stepTimeoutMS: 10_000 },
    );
  });

  /** Calls executeRun until the run is terminal, waiting a little while another executor holds the step. */
  async function driveToEnd(store: WorkflowEventStore, runId: string, sleeps: number[]): Promise<ExecuteRunResult[]> {
    const results: ExecuteRunResult[] = [];
    for (let i = 0; i < 200; i++) {
      const result = await executeRun(store, definition("race.relay"), runId, {
        now: testClock,
        sleep: async (ms) => {
          sleeps.push(ms);
          await new Promise((resolve) => setTimeout(resolve, ms));
        },
      });
      results.push(result);
      if (result.status === "terminal") return results;
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
    throw new Error("the run never finished");
  }

  it("exactly one step_started per (run_id, seq): the loser of a claim finds its seq taken (spec rule 3), backs off, and the run completes once", async () => {
    const actor = actorNamed("race-1");
    const runId = `${actor.id}.race00000001`;
    const outcome = await runInDurableObject(actor, async (_instance, state) => {
      // Two executors, each with its own store over the actor's SQLite.
      const a = createSqlEventStore(durableObjectSql(state.storage));
      const b = createSqlEventStore(durableObjectSql(state.storage));
      createRun(a, definition("race.relay"), null, { runId, workflowId: "race-1", now: testClock() });
      // B read the log just before A's first claim landed (a single thread cannot interleave a
      // synchronous read and write otherwise), so B's first claim collides with A's.
      const stale = b.events(runId);
      let firstRead = true;
      const bStale: WorkflowEventStore = {
        ...b,
        events: (id, afterSeq) => {
          if (firstRead && afterSeq === undefined) {
            firstRead = false;
            return stale;
          }
          return b.events(id, afterSeq);
        },
      };
      const sleepsA: number[] = [];
      const sleepsB: number[] = [];
      const [resultsA, resultsB] = await Promise.all([
        driveToEnd(a, runId, sleepsA),
        driveToEnd(bStale, runId, sleepsB),
      ]);
      const duplicates = state.storage.sql
        .exec("SELECT run_id, seq, COUNT(*) AS n FROM _workflow_events GROUP BY run_id, seq HAVING n > 1")
        .toArray();
      return { resultsA, resultsB, sleepsA, sleepsB, duplicates, events: a.events(runId) };
    });

    expect(outcome.sleepsB.length).toBeGreaterThanOrEqual(1);
    expect(outcome.duplicates).toEqual([]);
    expect(shape(outcome.events)).toEqual([
      "workflow_created",
      "step_started(start,1)",
      "step_completed(start->r2)",
      "step_started(r2,1)",
      "step_completed(r2->r3)",
      "step_started(r3,1)",
      "step_completed(r3->r4)",
      "step_started(r4,1)",
      "step_completed(r4->r5)",
      "step_started(r5,1)",
      "step_completed(r5)",
      "workflow_completed",
    ]);
    expectWellFormed(outcome.events);
    expect(outcome.events.filter((e) => e.type === "workflow_completed")).toHaveLength(1);
    // Every step function ran exactly once: nobody ran a step it did not claim.
    expect(invocations).toEqual(["race-1:start#1", "race-1:r2#1", "race-1:r3#1", "race-1:r4#1", "race-1:r5#1"]);
    expect(outcome.resultsA.at(-1)).toEqual({ status: "terminal" });
    expect(outcome.resultsB.at(-1)).toEqual({ status: "terminal" });
    expect(
      [...outcome.resultsA, ...outcome.resultsB].every((r) => r.status === "terminal" || r.status === "in_flight"),
    ).toBe(true);
  });

  it("two executors started together on the actor's store: one runs each step, the other finds it in flight", async () => {
    const actor = actorNamed("race-2");
    const runId = `${actor.id}.race00000002`;
    const events = await runInDurableObject(actor, async (_instance, state) => {
      const store = createSqlEventStore(durableObjectSql(state.storage));
      createRun(store, definition("race.relay"), null, { runId, workflowId: "race-2", now: testClock() });
      await Promise.all([driveToEnd(store, runId, []), driveToEnd(store, runId, []), driveToEnd(store, runId, [])]);
      return store.events(runId);
    });
    expectWellFormed(events);
    expect(events.filter((e) => e.type === "step_started")).toHaveLength(5);
    expect(events.at(-1)?.type).toBe("workflow_completed");
    expect(invocations).toEqual(["race-2:start#1", "race-2:r2#1", "race-2:r3#1", "race-2:r4#1", "race-2:r5#1"]);
  });
});

describe("WorkflowRunActor: one active run per workflow id", () => {
  beforeEach(() => {
    registerGated("single.gated");
    registerOther("single.other");
  });

  it("a second start with an active id returns the first run (created: false); once it finished, a new run is created in the same actor", async () => {
    gateFor("order-7");
    const first = await workflow.start("single.gated", { n: 1 }, { id: "order-7" });
    const again = await workflow.start("single.gated", { n: 2 }, { id: "order-7" });
    expect(first.created).toBe(true);
    expect(again).toMatchObject({ id: first.id, workflowId: "order-7", created: false });
    // Another workflow cannot take the id while it is active.
    const taken = await rejection(workflow.start("single.other", null, { id: "order-7" }));
    expect(taken.code).toBe("already_active");
    expect(taken.details).toMatchObject({ activeRunId: first.id });

    const actorId = env.WORKFLOW_RUNS.idFromName("order-7");
    const runsInActor = () =>
      runInDurableObject(env.WORKFLOW_RUNS.get(actorId), (_instance, state) =>
        state.storage.sql
          .exec<{ run_id: string; status: string }>("SELECT run_id, status FROM _workflow_runs ORDER BY position")
          .toArray(),
      );
    expect(await runsInActor()).toEqual([{ run_id: first.id, status: "running" }]);

    gateFor("order-7").open();
    await expect(again.result()).resolves.toEqual({ data: { n: 1 }, opened: true });
    gates.delete("order-7");
    gateFor("order-7");
    const later = await workflow.start("single.gated", { n: 3 }, { id: "order-7" });
    expect(later).toMatchObject({ workflowId: "order-7", created: true });
    expect(later.id).not.toBe(first.id);
    expect(actorIdOf(later.id).equals(actorId)).toBe(true);
    expect(await runsInActor()).toEqual([
      { run_id: first.id, status: "completed" },
      { run_id: later.id, status: "running" },
    ]);
    const ids = await listDurableObjectIds(env.WORKFLOW_RUNS);
    expect(ids.filter((id) => id.equals(actorId))).toHaveLength(1);
    gateFor("order-7").open();
    await expect(later.result()).resolves.toEqual({ data: { n: 3 }, opened: true });
  });

  it("runs without an id get an actor each", async () => {
    const a = await workflow.start("single.other");
    const b = await workflow.start("single.other");
    expect(a.workflowId).toBe(a.id);
    expect(actorIdOf(a.id).equals(actorIdOf(b.id))).toBe(false);
    await expect(a.result()).resolves.toBe("other");
    await expect(b.result()).resolves.toBe("other");
  });
});

describe("WorkflowRunActor: get and list", () => {
  beforeEach(() => {
    registerGated("query.gated");
    registerFatal("query.fatal");
    registerOther("query.other");
  });

  it("workflow.get finds a run from its id alone; a malformed or foreign run id is null", async () => {
    const run = await workflow.start("query.other", null, { id: "get-1" });
    await run.result();
    const view = await workflow.get(run.id);
    expect(view).toMatchObject({
      id: run.id,
      workflowId: "get-1",
      name: "query.other",
      status: "completed",
      result: "other",
    });
    expect(shape(view?.events ?? [])).toEqual([
      "workflow_created",
      "step_started(start,1)",
      "step_completed(start)",
      "workflow_completed",
    ]);

    const [hex, suffix] = run.id.split(".") as [string, string];
    for (const id of [
      "nope",
      `${hex}`,
      `${hex}.`,
      `${hex}.${suffix}x`,
      `${hex}.${suffix.toUpperCase()}`,
      `${hex.toUpperCase()}.${suffix}`,
      `${hex.slice(1)}.${suffix}`,
      `${hex}.${suffix}.${suffix}`,
      // 64 hex digits, but no id of this namespace (made up, or minted by another namespace).
      `${"0".repeat(64)}.${suffix}`,
      `${env.WORKFLOW_RUN_INDEX.idFromName("index")}.${suffix}`,
      // An id of this namespace, with a run that does not exist.
      `${hex}.zzzzzzzzzzzz`,
      `${env.WORKFLOW_RUNS.newUniqueId()}.${suffix}`,
    ]) {
      expect(await workflow.get(id), id).toBeNull();
    }
    expect((await rejection(workflow.get(""))).code).toBe("invalid_input");
  });

  it("workflow.list reads the index: newest first, name and status filters, limit and cursor", async () => {
    const done: string[] = [];
    for (const n of [1, 2, 3]) {
      const run = await workflow.start("query.other", null, { id: `list-done-${n}` });
      await run.result();
      done.push(run.id);
    }
    const failed = await workflow.start("query.fatal", null, { id: "list-failed" });
    await expect(failed.result()).rejects.toMatchObject({ code: "workflow_failed" });
    gateFor("list-open-1");
    gateFor("list-open-2");
    const open1 = await workflow.start("query.gated", null, { id: "list-open-1" });
    const open2 = await workflow.start("query.gated", null, { id: "list-open-2" });
    await vi.waitFor(async () => expect((await runIndexOf(actorEnv).get(failed.id))?.status).toBe("failed"));
    for (const id of done)
      await vi.waitFor(async () => expect((await runIndexOf(actorEnv).get(id))?.status).toBe("completed"));

    const ids = (page: { runs: { id: string }[] }) => page.runs.map((r) => r.id);
    expect(ids(await workflow.list())).toEqual([open2.id, open1.id, failed.id, done[2], done[1], done[0]]);
    expect(ids(await workflow.list({ name: "query.other" }))).toEqual([done[2], done[1], done[0]]);
    expect(ids(await workflow.list({ status: "running" }))).toEqual([open2.id, open1.id]);
    expect(ids(await workflow.list({ status: "failed" }))).toEqual([failed.id]);
    expect(ids(await workflow.list({ name: "query.gated", status: "completed" }))).toEqual([]);
    expect((await workflow.list({ name: "query.other", limit: 1 })).runs[0]).toEqual({
      id: done[2],
      workflowId: "list-done-3",
      name: "query.other",
      status: "completed",
      // Its only step: it ended in start.
      step: "start",
      createdAt: expect.any(Number),
      updatedAt: expect.any(Number),
      expiresAt: expect.any(Number),
    });

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await workflow.list({ limit: 4, ...(cursor ? { cursor } : {}) });
      seen.push(...ids(page));
      cursor = page.cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(2);
    expect(seen).toEqual([open2.id, open1.id, failed.id, done[2], done[1], done[0]]);
    const paged = await workflow.list({ name: "query.other", limit: 2 });
    expect(ids(paged)).toEqual([done[2], done[1]]);
    expect(ids(await workflow.list({ name: "query.other", limit: 2, cursor: paged.cursor }))).toEqual([done[0]]);

    for (const filter of [
      { limit: 0 },
      { limit: 101 },
      { limit: 1.5 },
      { status: "done" },
      { cursor: "not-a-cursor" },
    ]) {
      expect((await rejection(workflow.list(filter as never))).code).toBe("invalid_input");
    }
  });
});

describe("WorkflowRunActor: append rules on the actor's SQLite", () => {
  beforeEach(() => {
    registerRecoverable("append.recoverable");
  });

  it("an event with another workflow_id for the same run_id is workflow_id_mismatch, and nothing of its batch is appended", async () => {
    const actor = actorNamed("mismatch-1");
    const runId = `${actor.id}.mismatch0001`;
    const outcome = await runInDurableObject(actor, (_instance, state) => {
      const store = createSqlEventStore(durableObjectSql(state.storage));
      createRun(store, definition("append.recoverable"), null, { runId, workflowId: "mismatch-1", now: testClock() });
      const codes: unknown[] = [];
      const attempt = (events: StoredEvent[]) => {
        try {
          store.append(events);
          codes.push("appended");
        } catch (error) {
          codes.push(error instanceof PlatformError ? [error.code, error.details] : String(error));
        }
      };
      const at = testClock();
      attempt([
        { runId, workflowId: "mismatch-2", seq: 2, type: "step_started", payload: { step: "start", attempt: 1 }, at },
      ]);
      attempt([
        { runId, workflowId: "mismatch-1", seq: 2, type: "step_started", payload: { step: "start", attempt: 1 }, at },
        {
          runId,
          workflowId: "mismatch-2",
          seq: 3,
          type: "step_failed",
          payload: { step: "start", attempt: 1, reason: "x", retryable: true },
          at,
        },
      ]);
      return { codes, events: store.events(runId), summary: store.getRun(runId) };
    });
    expect(outcome.codes).toEqual([
      ["workflow_id_mismatch", { runId, expected: "mismatch-1", got: "mismatch-2" }],
      ["workflow_id_mismatch", { runId, expected: "mismatch-1", got: "mismatch-2" }],
    ]);
    expect(shape(outcome.events)).toEqual(["workflow_created"]);
    expect(outcome.summary).toMatchObject({ status: "running", workflowId: "mismatch-1" });
  });
});
