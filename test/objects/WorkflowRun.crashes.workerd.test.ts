/**
 * The WorkflowRunActor evicted or crashed mid-run: a graceful eviction drains the step in flight,
 * a hard reset leaves an orphaned attempt that the restarted actor records at once as
 * interrupted, and its alarm (or the recovery sweep, when the alarm is lost too) drives the run on.
 */
import { abortAllDurableObjects, evictDurableObject, runInDurableObject } from "cloudflare:test";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { sweepStuckRuns } from "#src/runtime/workflow/recoverySweep.ts";
import type { WorkflowSteps } from "#src/engine/api/definition.ts";
import { workflow } from "#src/engine/api/workflowApi.ts";
import { runIndexOf } from "#src/objects/runIndexClient.ts";
import { actorEnv, actorLog, actorOfRun, isTerminal, waitForIndexed, waitForLog } from "#test/support/workerd/index.ts";
import { expectWellFormed, START_FINISH_LOG } from "#test/support/workflow/index.ts";
import { gates, invocations, note, register, settled, shape, useActorTestHost } from "./WorkflowRun.fixture.ts";

useActorTestHost();

describe("WorkflowRunActor: eviction and crashes mid-run", () => {
  beforeEach(() => {
    register.gated("crash.gated");
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
    const orphan: WorkflowSteps = {
      start: async (ctx) => {
        note(ctx);
        return { step: "hang" };
      },
      // Attempt 1 never settles (its executor dies with it); attempt 2 answers at once.
      hang: async (ctx) => {
        note(ctx);
        if (ctx.attempt === 1) await new Promise<never>(() => {});
        return { step: "finish" };
      },
      finish: async (ctx) => {
        note(ctx);
        return { done: true as const, result: "recovered" };
      },
    };
    // A step timeout of a minute: a test passes in time only if the interruption is recorded at once.
    workflow("crash.orphan.slow", orphan, { stepTimeoutMS: 60_000, backoff: { initialMS: 10, jitter: 0 } });
    workflow("crash.orphan.last", orphan, { stepTimeoutMS: 60_000, maxAttempts: 1 });
  });

  it("a graceful eviction waits for the step in flight; the run then continues from storage in a fresh instance", async () => {
    gates.gateFor("evict-1");
    const run = await workflow.start("crash.gated", "e", { id: "evict-1" });
    const stub = actorOfRun(run.id);
    await waitForLog(run.id, (events) => events.at(-1)?.type === "step_started");
    const before = await runInDurableObject(stub, (instance) => instance);

    // evictDurableObject drains in-flight work first: it cannot orphan the awaiting step.
    const evicting = evictDurableObject(stub);
    expect(await settled(evicting)).toBe("pending");
    expect(shape(await actorLog(run.id))).toEqual(["workflow_created", "step_started(start,1)"]);
    gates.gateFor("evict-1").open();
    await evicting;

    expect(await runInDurableObject(stub, (instance) => instance)).not.toBe(before);
    const events = await actorLog(run.id);
    expect(shape(events)).toEqual(START_FINISH_LOG);
    expectWellFormed(events);
    expect(await workflow.get(run.id)).toMatchObject({ status: "completed", result: { data: "e", opened: true } });
  });

  it("evicted while waiting out a retry backoff: the alarm wakes a fresh instance that retries and completes", async () => {
    const run = await workflow.start("crash.backoff-then-done", null, { id: "evict-2" });
    const stub = actorOfRun(run.id);
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
    await waitForIndexed(run.id, "failed");
  });

  it("crashed mid-step, its alarm lost too: the interruption is recorded at once and the sweep re-enqueues the retry", async () => {
    const run = await workflow.start("crash.orphan.slow", null, { id: "crash-2" });
    await waitForLog(run.id, (events) => shape(events).at(-1) === "step_started(hang,1)");
    await abortAllDurableObjects();
    // The fresh instance records the interruption and arms its alarm before anything else reaches it; lose that alarm.
    await runInDurableObject(actorOfRun(run.id), (_instance, state) => state.storage.deleteAlarm());
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
