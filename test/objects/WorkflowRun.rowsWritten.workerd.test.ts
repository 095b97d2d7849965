/**
 * What a run costs its actor on Cloudflare's meter (issue 35, "cut the writes"), counted by the
 * runtime's own cursors (src/objects/storageMeter.ts) on the store the actor opens: a run's creation
 * writes its workflow_created row and its summary row (keyed by run_id alone: no index row beside it),
 * and an append writes one row for all of its events plus the summary's update.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { StoredEvent } from "#src/engine/execution/events.ts";
import { createSqlEventStore } from "#src/engine/storage/sqlEventStore.ts";
import { durableObjectSql } from "#src/objects/durableObjectSql.ts";
import { readStorageMeter, resetStorageMeter } from "#src/objects/storageMeter.ts";

const RUN = { runId: "rows-actor.run00000001", workflowId: "rows-actor" };
const at = 1_000;
const event = (seq: number, type: string, payload: object) =>
  ({ ...RUN, seq, type, payload, at: at + seq }) as StoredEvent;

const STEPS: { what: string; write: (store: ReturnType<typeof createSqlEventStore>) => unknown; rows: number }[] = [
  {
    what: "the run's creation: workflow_created and the summary row",
    write: (store) =>
      store.createRunIfNoActive(event(1, "workflow_created", { workflowName: "rows.flow", writes: {} })),
    rows: 2,
  },
  {
    what: "a claim alone: its row and the summary's update",
    write: (store) => store.append([event(2, "step_started", { step: "start", attempt: 1 })]),
    rows: 2,
  },
  {
    what: "a stretch of three steps and the end (six events): one log row and the summary's update",
    write: (store) =>
      store.append([
        event(3, "step_completed", { step: "start", writes: {}, next_step: "b" }),
        event(4, "step_started", { step: "b", attempt: 1 }),
        event(5, "step_completed", { step: "b", writes: {}, next_step: "c" }),
        event(6, "step_started", { step: "c", attempt: 1 }),
        event(7, "step_completed", { step: "c", writes: {} }),
        event(8, "workflow_completed", { result: "ok" }),
      ]),
    rows: 2,
  },
];

describe("WorkflowRunActor: rows written per write of a run", () => {
  it("writes one log row per append and no index row beside the summary", async () => {
    const stub = env.WORKFLOW_RUNS.get(env.WORKFLOW_RUNS.idFromName("rows-actor"));
    const { written, events } = await runInDurableObject(stub, (_instance, state) => {
      const store = createSqlEventStore(durableObjectSql(state.storage), { manyRuns: false, packRows: true });
      const written = STEPS.map(({ what, write }) => {
        resetStorageMeter();
        state.storage.transactionSync(() => write(store));
        return { what, rows: readStorageMeter().rowsWritten };
      });
      return { written, events: store.events(RUN.runId) };
    });
    expect(written).toEqual(STEPS.map(({ what, rows }) => ({ what, rows })));
    // Read back, the log is one event per seq, 1 to 8.
    expect(events.map((e) => [e.seq, e.type])).toEqual([
      [1, "workflow_created"],
      [2, "step_started"],
      [3, "step_completed"],
      [4, "step_started"],
      [5, "step_completed"],
      [6, "step_started"],
      [7, "step_completed"],
      [8, "workflow_completed"],
    ]);
  });
});
