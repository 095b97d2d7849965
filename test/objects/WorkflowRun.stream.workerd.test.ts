/**
 * The WorkflowRunActor's side of live streams: what only the Durable Object implementation does. Its
 * messages live in their own table, never in `_workflow_events`; a read of a run that no execution drives
 * answers at once and says when to ask again (no request held open, so the actor can hibernate).
 * Order, offsets, topics, mid-step delivery and limits are in test/conformance/streamConformance.ts.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { workflow } from "#src/engine/workflowApi.ts";
import type { WorkflowRunActor } from "#src/objects/WorkflowRun.ts";
import { actorForRun } from "#src/runtime/workflow/durableObjectBackend.ts";
import { workflowRunHost } from "#src/objects/workflowRunHost.ts";
import { actorEnv, actorIdOf } from "#test/support/workerd/index.ts";
import { useActorTestHost } from "./WorkflowRun.fixture.ts";

useActorTestHost();

describe("WorkflowRunActor: run streams", () => {
  it("keeps messages in _workflow_stream beside the log; the log holds only the run's events", async () => {
    workflow("stream.logged", {
      start: async (ctx) => {
        ctx.publish("progress", { pct: 1 });
        return { done: true, result: null };
      },
    });
    const run = await workflow.start("stream.logged", {});
    await run.result();
    const stub = actorEnv.WORKFLOW_RUNS.get(actorIdOf(run.id));
    const tables = await runInDurableObject(stub, (_instance: WorkflowRunActor, state) => ({
      stream: state.storage.sql.exec("SELECT topic, data FROM _workflow_stream ORDER BY message_offset").toArray(),
      types: state.storage.sql
        .exec("SELECT DISTINCT type FROM _workflow_events")
        .toArray()
        .map((row) => row.type),
    }));
    expect(tables.stream).toContainEqual({ topic: "progress", data: '{"pct":1}' });
    expect(tables.types).toEqual(["workflow_created", "step_started", "step_completed", "workflow_completed"]);
  });

  it.each([
    ["waits for an event", { step: "after", waitFor: "go" }, 30_000],
    ["sleeps 10 s", { step: "after", sleepMS: 10_000 }, 10_000],
  ])(
    "a run that %s: a read with nothing new answers at once, asking the reader back later",
    async (_case, next, retryAfterMS) => {
      workflow("stream.resting", {
        start: async () => next,
        after: async () => ({ done: true, result: null }),
      });
      // A clock that stands still: the wake a sleep records, and the actor's answer, are exact.
      const frozen = Date.now();
      workflowRunHost.clock = () => frozen;
      const run = await workflow.start("stream.resting", {});
      const actor = actorForRun(actorEnv, run.id)!;
      await vi.waitFor(async () => {
        const batch = await actor.readStream(run.id, { from: 0, topics: ["run"] });
        expect(batch.messages.at(-1)?.data).toMatchObject({ type: "waitFor" in next ? "waiting" : "sleeping" });
      });
      const tail = await actor.readStream(run.id, { from: 3 });
      expect(tail.messages).toEqual([]);
      expect(tail.ended).toBe(false);
      // A sleep's wake is computed from the actor's clock: within the slack of the time the test took so far.
      expect(tail.retryAfterMS).toBeLessThanOrEqual(retryAfterMS);
      expect(tail.retryAfterMS).toBeGreaterThan(retryAfterMS - 5000);
      await workflow.cancel(run.id);
    },
  );
});
