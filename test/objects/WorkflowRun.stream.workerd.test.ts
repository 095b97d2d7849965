/**
 * The WorkflowRunActor's side of live streams: what only the Durable Object implementation does. What
 * steps publish lives in its own table, never in `_workflow_events`; the lifecycle is read from the log; a read of a run that no execution drives
 * answers at once and says when to ask again (no request held open, so the actor can hibernate).
 * Order, offsets, topics, mid-step delivery and limits are in test/conformance/streamConformance.ts.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { workflow } from "#src/engine/api/workflowApi.ts";
import type { WorkflowRunActor } from "#src/objects/WorkflowRun.ts";
import { actorForRun } from "#src/runtime/workflow/durableObjectBackend.ts";
import { workflowRunHost } from "#src/objects/workflowRunHost.ts";
import { actorEnv, actorIdOf, actorLog, actorOfRun } from "#test/support/workerd/index.ts";
import { useActorTestHost } from "./WorkflowRun.fixture.ts";

useActorTestHost();

describe("WorkflowRunActor: run streams", () => {
  it("keeps what steps publish in _workflow_published beside the log; the lifecycle is read from the log, never stored", async () => {
    workflow("stream.logged", {
      start: async (ctx) => {
        ctx.publish("progress", { pct: 1 });
        return { done: true, result: null };
      },
    });
    const run = await workflow.start("stream.logged", {});
    await run.result();
    const stub = actorEnv.WORKFLOW_RUNS.get(actorIdOf(run.id));
    const rows = await runInDurableObject(stub, (_instance: WorkflowRunActor, state) => ({
      published: state.storage.sql
        .exec("SELECT after_seq, topic, data FROM _workflow_published ORDER BY position")
        .toArray(),
      tables: state.storage.sql
        .exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '_workflow_%' ORDER BY name")
        .toArray()
        .map((row) => row.name),
    }));
    // Published while step_started (seq 2) was the log's last event.
    expect(rows.published).toEqual([{ after_seq: 2, topic: "progress", data: '{"pct":1}' }]);
    expect(rows.tables).toEqual(["_workflow_events", "_workflow_published", "_workflow_runs"]);
    expect((await actorLog(run.id)).map((event) => event.type)).toEqual([
      "workflow_created",
      "step_started",
      "step_completed",
      "workflow_completed",
    ]);
    const read = await actorForRun(actorEnv, run.id)!.readStream(run.id, { from: 0 });
    expect(read.messages.map((message) => [message.offset, message.topic, message.data])).toEqual([
      [0, "run", { type: "step_started", step: "start" }],
      [1, "progress", { pct: 1 }],
      [2, "run", { type: "step_completed", step: "start" }],
      [3, "run", { type: "ended", status: "completed" }],
    ]);
  });

  it("a run that publishes nothing writes no stream row and makes no stream table; its lifecycle is still read", async () => {
    workflow("stream.silent", { start: async () => ({ done: true, result: null }) });
    const run = await workflow.start("stream.silent", {});
    await run.result();
    const tables = await runInDurableObject(actorOfRun(run.id), (_instance, state) =>
      state.storage.sql
        .exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '_workflow_%' ORDER BY name")
        .toArray()
        .map((row) => row.name),
    );
    expect(tables).toEqual(["_workflow_events", "_workflow_runs"]);
    const read = await actorForRun(actorEnv, run.id)!.readStream(run.id, { from: 0, topics: ["run"] });
    expect(read.messages.map((message) => message.data)).toEqual([
      { type: "step_started", step: "start" },
      { type: "step_completed", step: "start" },
      { type: "ended", status: "completed" },
    ]);
    expect(read.ended).toBe(true);
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
