/**
 * The recovery sweep over the per-project run index: it finds each stuck reason in logs a crashed
 * executor left (planted straight into the actors' SQLite), repairs it, re-enqueues the runs that
 * need an executor, and leaves healthy runs alone.
 */
import { runInDurableObject } from "cloudflare:test";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { StoredEvent } from "#src/engine/execution/events.ts";
import { createSqlEventStore } from "#src/engine/storage/sqlEventStore.ts";
import { workflow } from "#src/engine/api/workflowApi.ts";
import { durableObjectSql } from "#src/objects/durableObjectSql.ts";
import { runIndexOf } from "#src/objects/runIndexClient.ts";
import { sweepStuckRuns } from "#src/runtime/workflow/recoverySweep.ts";
import { actorEnv, actorLog, actorNamed, isTerminal, waitForIndexed, waitForLog } from "#test/support/workerd/index.ts";
import { expectWellFormed, START_FINISH_LOG } from "#test/support/workflow/index.ts";
import { gates, invocations, note, register, shape, testClock, useActorTestHost } from "./WorkflowRun.fixture.ts";

useActorTestHost();

describe("WorkflowRunActor: the recovery sweep over the index", () => {
  beforeEach(() => {
    register.gated("sweep.gated");
    register.recoverable("sweep.recoverable");
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
    register.other("sweep.other");
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

  it("finds each stuck reason, repairs it, re-enqueues the runs that need an executor and logs their number; all end with the spec's sequence", async () => {
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
    gates.gateFor("executing-now");
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
      stuck_created: START_FINISH_LOG,
      stuck_completed: START_FINISH_LOG,
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
      stuck_terminal_completed: START_FINISH_LOG,
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
      await waitForIndexed(runs[key], "completed");
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
