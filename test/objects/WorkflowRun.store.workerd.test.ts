/**
 * The event store on a WorkflowRun actor's own SQLite: executors racing on one run (exactly one
 * step_started per seq, spec rule 3) and the append rules (a batch with another workflow id
 * appends nothing).
 */
import { runInDurableObject } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { PlatformError } from "#src/core/errors.ts";
import { createRun } from "#src/engine/execution/createRun.ts";
import type { StoredEvent } from "#src/engine/execution/events.ts";
import { executeRun, type ExecuteRunResult } from "#src/engine/execution/executeRun.ts";
import { createSqlEventStore } from "#src/engine/storage/sqlEventStore.ts";
import type { WorkflowEventStore } from "#src/engine/storage/store.ts";
import { workflow } from "#src/engine/api/workflowApi.ts";
import { durableObjectSql } from "#src/objects/durableObjectSql.ts";
import { actorNamed } from "#test/support/workerd/index.ts";
import { definitionOf, expectWellFormed } from "#test/support/workflow/index.ts";
import { chainOf, invocations, register, shape, testClock, useActorTestHost } from "./WorkflowRun.fixture.ts";

useActorTestHost();

describe("WorkflowRunActor: two executors racing on the actor's store", () => {
  // Every step takes a little real time, so two executors racing on one run overlap.
  beforeEach(() => {
    const work = () => new Promise((resolve) => setTimeout(resolve, 5));
    workflow("race.relay", chainOf(["start", "r2", "r3", "r4", "r5"], work, "relay done"), { stepTimeoutMS: 10_000 });
  });

  /** Calls executeRun until the run is terminal, waiting a little while another executor holds the step. */
  async function driveToEnd(store: WorkflowEventStore, runId: string, sleeps: number[]): Promise<ExecuteRunResult[]> {
    const results: ExecuteRunResult[] = [];
    for (let i = 0; i < 200; i++) {
      const result = await executeRun(store, definitionOf("race.relay"), runId, {
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
      createRun(a, definitionOf("race.relay"), null, { runId, workflowId: "race-1", now: testClock() });
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
      createRun(store, definitionOf("race.relay"), null, { runId, workflowId: "race-2", now: testClock() });
      await Promise.all([driveToEnd(store, runId, []), driveToEnd(store, runId, []), driveToEnd(store, runId, [])]);
      return store.events(runId);
    });
    expectWellFormed(events);
    expect(events.filter((e) => e.type === "step_started")).toHaveLength(5);
    expect(events.at(-1)?.type).toBe("workflow_completed");
    expect(invocations).toEqual(["race-2:start#1", "race-2:r2#1", "race-2:r3#1", "race-2:r4#1", "race-2:r5#1"]);
  });
});

describe("WorkflowRunActor: append rules on the actor's SQLite", () => {
  beforeEach(() => {
    register.recoverable("append.recoverable");
  });

  it("an event with another workflow_id for the same run_id is workflow_id_mismatch, and nothing of its batch is appended", async () => {
    const actor = actorNamed("mismatch-1");
    const runId = `${actor.id}.mismatch0001`;
    const outcome = await runInDurableObject(actor, (_instance, state) => {
      const store = createSqlEventStore(durableObjectSql(state.storage));
      createRun(store, definitionOf("append.recoverable"), null, { runId, workflowId: "mismatch-1", now: testClock() });
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
