/**
 * A run actor deployed before lifecycle messages were read from the log kept every message of a run's
 * stream, the lifecycle's too, in `_workflow_stream` with its offset. A run in flight then keeps that
 * layout to its end (its offsets never move: a reader resumes where it was); a run started afterwards
 * in the same actor stores only what its steps publish, in `_workflow_published`.
 */
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { lifecycleMessagesOf } from "#src/engine/streams/lifecycleMessages.ts";
import type { StreamMessage } from "#src/engine/streams/runStream.ts";
import { workflow } from "#src/engine/api/workflowApi.ts";
import { actorForRun } from "#src/runtime/workflow/durableObjectBackend.ts";
import { actorEnv, actorLog, actorOfRun, waitForLog } from "#test/support/workerd/index.ts";
import { useActorTestHost } from "./WorkflowRun.fixture.ts";

useActorTestHost();

/** The table and rows the version before wrote. */
const LEGACY_SCHEMA = `CREATE TABLE IF NOT EXISTS _workflow_stream (
    run_id TEXT NOT NULL, message_offset INTEGER NOT NULL, topic TEXT NOT NULL, data TEXT NOT NULL, bytes INTEGER NOT NULL,
    at INTEGER NOT NULL, step TEXT NOT NULL, attempt INTEGER NOT NULL, PRIMARY KEY (run_id, message_offset)) WITHOUT ROWID;`;

const said = (message: StreamMessage) => [message.offset, message.topic, message.data];

const readAll = async (runId: string) => (await actorForRun(actorEnv, runId)!.readStream(runId, { from: 0 })).messages;

describe("WorkflowRunActor: a run whose stream began in the old layout", () => {
  it("keeps its offsets and goes on in that layout; a later run of the actor stores only what it publishes", async () => {
    workflow("legacy.stream", {
      start: async (ctx) => {
        ctx.publish("progress", "before");
        return { step: "finish", waitFor: "go" };
      },
      finish: async (ctx) => {
        ctx.publish("progress", "after");
        return { done: true, result: null };
      },
    });
    const run = await workflow.start("legacy.stream", {}, { id: "legacy-stream" });
    await waitForLog(run.id, (events) => events.at(-1)?.type === "step_completed");
    const stub = actorOfRun(run.id);
    // Rewrite the actor's storage as the version before left it: the lifecycle stored beside the published message.
    const log = await actorLog(run.id);
    await runInDurableObject(stub, (_instance, state) => {
      const sql = state.storage.sql;
      sql.exec(LEGACY_SCHEMA);
      const rows = log.flatMap((event) => [
        ...lifecycleMessagesOf(event),
        ...(event.type === "step_started"
          ? [{ topic: "progress", json: '"before"', at: event.at, step: "start", attempt: 1 }]
          : []),
      ]);
      for (const [offset, row] of rows.entries())
        sql.exec(
          "INSERT INTO _workflow_stream VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
          run.id,
          offset,
          row.topic,
          row.json,
          row.json.length,
          row.at,
          row.step,
          row.attempt,
        );
      sql.exec("DROP TABLE _workflow_published");
    });
    // A fresh instance, as after a deploy.
    await evictDurableObject(stub);
    const before = (await readAll(run.id)).map(said);
    expect(before.map(([offset, topic]) => [offset, topic])).toEqual([
      [0, "run"],
      [1, "progress"],
      [2, "run"],
      [3, "run"],
    ]);

    await workflow.send(run.id, "go");
    await expect(run.result()).resolves.toBeNull();
    expect((await readAll(run.id)).map(said)).toEqual([
      ...before,
      [4, "run", { type: "step_started", step: "finish" }],
      [5, "progress", "after"],
      [6, "run", { type: "step_completed", step: "finish" }],
      [7, "run", { type: "ended", status: "completed" }],
    ]);

    const later = await workflow.start("legacy.stream", {}, { id: "legacy-stream" });
    await waitForLog(later.id, (events) => events.at(-1)?.type === "step_completed");
    const rows = await runInDurableObject(stub, (_instance, state) => ({
      legacy: state.storage.sql.exec("SELECT DISTINCT run_id FROM _workflow_stream").toArray(),
      published: state.storage.sql.exec("SELECT run_id, topic, data FROM _workflow_published").toArray(),
    }));
    expect(rows).toEqual({
      legacy: [{ run_id: run.id }],
      published: [{ run_id: later.id, topic: "progress", data: '"before"' }],
    });
    expect((await readAll(later.id)).map(said).slice(0, 2)).toEqual([
      [0, "run", { type: "step_started", step: "start" }],
      [1, "progress", "before"],
    ]);
    await workflow.cancel(later.id);
  });
});
