/**
 * The WorkflowRunActor itself: what only the Durable Object implementation
 * does. This file: its alarms, its waiters and the per-project run index; the
 * step-loop budget, crashes, the recovery sweep, the actor's own store, one
 * active run per id, and get/list are in WorkflowRunActor.<aspect>.workerd.test.ts.
 * The behaviour every backend shares is in test/conformance/workflowConformance.ts.
 */
import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import type { StoredEvent } from "#src/engine/execution/events.ts";
import { workflow } from "#src/engine/api/workflowApi.ts";
import { runIndexOf } from "#src/objects/runIndexClient.ts";
import { workflowRunActor } from "#src/runtime/workflow/workflowActorClient.ts";
import {
  actorAlarm,
  actorEnv,
  actorIdOf,
  actorLog,
  isTerminal,
  waitForIndexed,
  waitForLog,
} from "#test/support/workerd/index.ts";
import { expectWellFormed, rejection, START_FINISH_LOG } from "#test/support/workflow/index.ts";
import { gates, invocations, register, settled, shape, useActorTestHost } from "./WorkflowRun.fixture.ts";

useActorTestHost();

/** The index's summary of a completed run, its times those of its first and last events. */
/** A completed run's index row: it ended in `finish` and is kept the default 30 days after it ended. */
function completedSummary(id: string, workflowId: string, name: string, events: StoredEvent[]) {
  return {
    id,
    workflowId,
    name,
    status: "completed",
    step: "finish",
    createdAt: events[0]!.at,
    updatedAt: events.at(-1)!.at,
    expiresAt: events.at(-1)!.at + 30 * 24 * 60 * 60 * 1000,
  };
}

describe("WorkflowRunActor: alarms, waiters and the run index", () => {
  beforeEach(() => {
    register.gated("alarms.gated");
    register.recoverable("alarms.recoverable");
    register.fatal("alarms.fatal");
    register.other("alarms.other");
  });

  it("start arms the alarm and the run completes with no further call; waitForTerminal wakes on the terminal event; the index goes running → completed", async () => {
    gates.gateFor("alarm-1");
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
    gates.gateFor("alarm-1").open();
    // Woken by the terminal write with the ended run: the slice running out would answer null
    // (after 60 s, far past this test's timeout).
    const view = await waiting;
    expect(view?.status).toBe("completed");
    expect(view?.result).toEqual({ data: { order: 42 }, opened: true });
    expect(view?.events.at(-1)?.type).toBe("workflow_completed");

    const events = await actorLog(run.id);
    expect(shape(events)).toEqual(START_FINISH_LOG);
    expectWellFormed(events);
    expect(view?.events).toHaveLength(events.length);
    expect(invocations).toEqual(["alarm-1:start#1", "alarm-1:finish#1"]);

    await waitForIndexed(run.id, "completed");
    expect(await runIndexOf(actorEnv).get(run.id)).toEqual(completedSummary(run.id, "alarm-1", "alarms.gated", events));
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
        ...completedSummary(started.runId, "quick-1", "alarms.recoverable", events),
        lastSeq: events.at(-1)!.seq,
      },
    });
    expect(shape(events)).toEqual(START_FINISH_LOG);
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
    gates.gateFor("quick-3");
    const open = await workflow.start("alarms.gated", "q", { id: "quick-3" });
    expect(await runIndexOf(actorEnv).get(open.id)).toMatchObject({ status: "running" });
    gates.gateFor("quick-3").open();
    await expect(open.result()).resolves.toEqual({ data: "q", opened: true });
  });

  it("waitForTerminal answers a finished run at once, null after its slice for a running one, not_found for an unknown one", async () => {
    const done = await workflow.start("alarms.other", null, { id: "wait-1" });
    const doneActor = workflowRunActor(actorEnv, actorIdOf(done.id));
    await waitForLog(done.id, isTerminal);
    expect(await doneActor.waitForTerminal(done.id, 60_000)).toMatchObject({ status: "completed", result: "other" });

    gates.gateFor("wait-2");
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
    await waitForIndexed(run.id, "failed");
  });

  it("execute runs (or joins) the step loop and answers done; an unknown run of an existing actor is not_found", async () => {
    const run = await workflow.start("alarms.recoverable", null, { id: "exec-1" });
    const actor = workflowRunActor(actorEnv, actorIdOf(run.id));
    expect(await actor.execute(run.id)).toEqual({ done: true });
    expect(await actor.execute(run.id)).toEqual({ done: true });
    const events = await actorLog(run.id);
    expect(shape(events)).toEqual(START_FINISH_LOG);
    expect(invocations).toEqual(["exec-1:start#1", "exec-1:finish#1"]);
    expect((await rejection(actor.execute(`${actorIdOf(run.id)}.zzzzzzzzzzzz`))).code).toBe("not_found");
  });
});
