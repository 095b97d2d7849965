import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { StoredEvent, WorkflowEventPayloads, WorkflowEventType } from "#src/engine/execution/events.ts";
import { summaryOf } from "#src/engine/execution/appendRules.ts";
import type { WorkflowEventStore, RunIndex } from "#src/engine/storage/store.ts";
import { thrownCode } from "#test/support/workflow/rejection.ts";

/**
 * The rules every workflow event store keeps (store.ts). Free of Node and
 * Cloudflare imports so the same cases run against the in-memory store, the
 * node:sqlite store and the Durable Object store inside workerd.
 */
export type ConformanceStore = WorkflowEventStore & RunIndex;

export interface StoreUnderTest {
  store: ConformanceStore;
  close?(): void | Promise<void>;
  /**
   * Runs one case (a synchronous body using `store`) where the store can be
   * used; default: right here. A Durable Object's SQLite answers only inside
   * that object's own I/O context, so the workerd run hands each body to the
   * object (runInDurableObject).
   */
  run?(body: () => void): Promise<void>;
}

const T0 = 1_700_000_000_000;

function event<T extends WorkflowEventType>(
  runId: string,
  seq: number,
  type: T,
  payload: WorkflowEventPayloads[T],
  workflowId = runId,
  at = T0 + seq,
): StoredEvent {
  return { runId, workflowId, seq, type, payload, at } as StoredEvent;
}

function created(runId: string, workflowId = runId, workflowName = "greet", at = T0): StoredEvent {
  return event(runId, 1, "workflow_created", { workflowName, writes: { data: { name: "Ada" } } }, workflowId, at);
}

export function describeEventStoreConformance(
  name: string,
  makeStore: () => StoreUnderTest | Promise<StoreUnderTest>,
): void {
  describe(`workflow event store conformance: ${name}`, () => {
    let subject: StoreUnderTest;
    let store: ConformanceStore;
    beforeEach(async () => {
      subject = await makeStore();
      store = subject.store;
    });
    afterEach(async () => {
      await subject.close?.();
    });
    const storeCase = (title: string, body: () => void) =>
      it(title, async () => {
        if (subject.run) await subject.run(body);
        else body();
      });

    storeCase("round-trips events exactly, in seq order, with afterSeq, lastEvent and createdEvent", () => {
      expect(store.createRunIfNoActive(created("r1"))).toEqual({ created: true });
      const rest = [
        event("r1", 2, "step_started", { step: "start", attempt: 1 }),
        event("r1", 3, "step_completed", {
          step: "start",
          writes: { n: 1, s: "é😀", deep: { a: [1, null] } },
          next_step: "finish",
        }),
        event("r1", 4, "step_started", { step: "finish", attempt: 1 }),
        event("r1", 5, "step_completed", { step: "finish", writes: {} }),
        event("r1", 6, "workflow_completed", { result: { hello: "Ada" } }),
      ];
      store.append(rest);
      expect(store.events("r1")).toEqual([created("r1"), ...rest]);
      expect(store.events("r1", 4)).toEqual(rest.slice(3));
      expect(store.lastEvent("r1")).toEqual(rest[4]);
      expect(store.createdEvent("r1")).toEqual(created("r1"));
      // An absent next_step stays absent (not null).
      expect("next_step" in (store.events("r1", 4)[0] as StoredEvent).payload).toBe(false);
      expect(store.events("missing")).toEqual([]);
      expect(store.lastEvent("missing")).toBeNull();
      expect(store.createdEvent("missing")).toBeNull();
    });

    storeCase("appends a long batch whole (the SQL stores write it in several statements)", () => {
      store.createRunIfNoActive(created("r1"));
      const batch = Array.from({ length: 40 }, (_, i) =>
        event("r1", i + 2, "event_received", { name: "tick", payload: { i } }),
      );
      store.append(batch);
      expect(store.events("r1")).toEqual([created("r1"), ...batch]);
      expect(store.getRun("r1")).toMatchObject({ status: "running" });
    });

    storeCase("hands out copies: changing a returned event does not change the log", () => {
      store.createRunIfNoActive(created("r1"));
      const first = store.events("r1")[0] as StoredEvent & { type: "workflow_created" };
      try {
        (first.payload.writes as Record<string, unknown>).data = "changed";
      } catch {
        // Frozen payloads refuse the write; that is fine too.
      }
      expect(store.events("r1")[0]).toEqual(created("r1"));
    });

    storeCase("allows one active run per workflow id and a new one once it is terminal", () => {
      expect(store.createRunIfNoActive(created("r1", "order-42"))).toEqual({ created: true });
      expect(store.createRunIfNoActive(created("r2", "order-42"))).toEqual({ created: false, activeRunId: "r1" });
      expect(store.events("r2")).toEqual([]);
      store.append([event("r1", 2, "workflow_failed", { reason: "x", cause: "non_retryable" }, "order-42")]);
      expect(store.createRunIfNoActive(created("r2", "order-42"))).toEqual({ created: true });
      expect(store.activeRunIds()).toEqual(["r2"]);
    });

    storeCase("answers seqTaken for a second workflow_created of an existing run id, and writes nothing", () => {
      store.createRunIfNoActive(created("r1", "a"));
      expect(store.createRunIfNoActive(created("r1", "b"))).toEqual({
        created: false,
        seqTaken: { runId: "r1", seq: 1 },
      });
      expect(store.events("r1")).toEqual([created("r1", "a")]);
      expect(store.getRun("r1")).toMatchObject({ workflowId: "a" });
    });

    storeCase(
      "two writers race for a seq: the taken seq is a result (seqTaken), not an error, and nothing of the batch is written",
      () => {
        store.createRunIfNoActive(created("r1"));
        expect(store.append([event("r1", 2, "step_started", { step: "start", attempt: 1 })])).toEqual({
          appended: true,
        });
        expect(store.append([event("r1", 2, "step_started", { step: "start", attempt: 1 })])).toEqual({
          appended: false,
          seqTaken: { runId: "r1", seq: 2 },
        });
        expect(
          store.append([
            event("r1", 2, "step_completed", { step: "start", writes: {} }),
            event("r1", 3, "workflow_completed", { result: null }),
          ]),
        ).toEqual({ appended: false, seqTaken: { runId: "r1", seq: 2 } });
        // A seq taken long ago, even by a run that has ended since, is the same race.
        store.append([event("r1", 3, "workflow_completed", { result: 1 })]);
        expect(
          store.append([event("r1", 3, "step_failed", { step: "start", attempt: 1, reason: "late", retryable: true })]),
        ).toEqual({
          appended: false,
          seqTaken: { runId: "r1", seq: 3 },
        });
        expect(store.events("r1").map((e) => e.type)).toEqual([
          "workflow_created",
          "step_started",
          "workflow_completed",
        ]);
        expect(store.getRun("r1")).toMatchObject({ status: "completed", updatedAt: T0 + 3 });
      },
    );

    storeCase("is all-or-nothing across runs in one batch: a seq taken in one run writes nothing of the others", () => {
      store.createRunIfNoActive(created("r1"));
      store.createRunIfNoActive(created("r2"));
      store.append([event("r2", 2, "step_started", { step: "start", attempt: 1 })]);
      expect(
        store.append([
          event("r1", 2, "step_started", { step: "start", attempt: 1 }),
          event("r2", 2, "step_started", { step: "start", attempt: 1 }),
        ]),
      ).toEqual({ appended: false, seqTaken: { runId: "r2", seq: 2 } });
      expect(store.events("r1")).toHaveLength(1);
      expect(store.getRun("r1")).toMatchObject({ status: "running", updatedAt: T0 });
      // The same batch once r2's seq is free again for it (seq 3) goes in whole.
      expect(
        store.append([
          event("r1", 2, "step_started", { step: "start", attempt: 1 }),
          event("r2", 3, "step_failed", { step: "start", attempt: 1, reason: "x", retryable: true }),
        ]),
      ).toEqual({ appended: true });
      expect(store.events("r1")).toHaveLength(2);
      expect(store.events("r2")).toHaveLength(3);
    });

    storeCase("throws workflow_id_mismatch for an event of another workflow id, and appends nothing", () => {
      store.createRunIfNoActive(created("r1", "order-1"));
      const code = thrownCode(() =>
        store.append([
          event("r1", 2, "step_started", { step: "start", attempt: 1 }, "order-1"),
          event("r1", 3, "step_failed", { step: "start", attempt: 1, reason: "x", retryable: true }, "order-2"),
        ]),
      );
      expect(code).toBe("workflow_id_mismatch");
      expect(store.events("r1")).toHaveLength(1);
    });

    storeCase("refuses appends to a run that was never created, gaps in seq, and events after the terminal one", () => {
      expect(thrownCode(() => store.append([event("ghost", 2, "step_started", { step: "start", attempt: 1 })]))).toBe(
        "not_found",
      );
      store.createRunIfNoActive(created("r1"));
      expect(thrownCode(() => store.append([event("r1", 3, "step_started", { step: "start", attempt: 1 })]))).toBe(
        "internal",
      );
      expect(
        thrownCode(() => store.append([event("r1", 2, "workflow_created", { workflowName: "greet", writes: {} })])),
      ).toBe("internal");
      store.append([event("r1", 2, "workflow_completed", { result: 1 })]);
      expect(thrownCode(() => store.append([event("r1", 3, "step_started", { step: "start", attempt: 1 })]))).toBe(
        "conflict",
      );
      expect(store.events("r1")).toHaveLength(2);
    });

    storeCase("indexes runs: getRun, status after each append, activeRunIds", () => {
      store.createRunIfNoActive(created("r1", "r1", "greet", T0));
      expect(store.getRun("r1")).toEqual({
        id: "r1",
        workflowId: "r1",
        name: "greet",
        status: "running",
        step: "start",
        createdAt: T0,
        updatedAt: T0,
      });
      store.append([event("r1", 2, "step_started", { step: "start", attempt: 1 }, "r1", T0 + 50)]);
      expect(store.getRun("r1")?.updatedAt).toBe(T0 + 50);
      store.append([
        event("r1", 3, "step_failed", { step: "start", attempt: 1, reason: "no", retryable: false }, "r1", T0 + 60),
        event("r1", 4, "workflow_failed", { reason: "no", cause: "non_retryable" }, "r1", T0 + 60),
      ]);
      expect(store.getRun("r1")).toMatchObject({ status: "failed", updatedAt: T0 + 60 });
      expect(store.getRun("nope")).toBeNull();
      expect(store.activeRunIds()).toEqual([]);
    });

    storeCase(
      "a parent is waiting from the step that starts children until it claims its next step; pause and resume keep it",
      () => {
        const children = [
          { run_id: "c1", workflow: "square" },
          { run_id: "c2", workflow: "square" },
        ];
        const fanOut = (runId: string, seq: number) =>
          event(runId, seq, "step_completed", { step: "start", writes: {}, next_step: "collect", children });
        const finished = (runId: string, seq: number, child: string) =>
          event(runId, seq, "child_finished", { run_id: child, workflow: "square", status: "completed", result: 1 });
        store.createRunIfNoActive(created("p1", "p1", "fan"));
        store.createRunIfNoActive(created("p2", "p2", "fan"));
        // Each row: a batch appended, then the status its run has.
        const rows: [StoredEvent[], string][] = [
          [[event("p1", 2, "step_started", { step: "start", attempt: 1 })], "running"],
          [[fanOut("p1", 3)], "waiting"],
          [[finished("p1", 4, "c1")], "waiting"],
          [[event("p1", 5, "workflow_paused", { reason: "look" })], "paused"],
          [[event("p1", 6, "workflow_resumed", {})], "waiting"],
          [[event("p1", 7, "workflow_paused", { reason: "again" }), finished("p1", 8, "c2")], "paused"],
          [
            [event("p1", 9, "workflow_resumed", {}), event("p1", 10, "step_started", { step: "collect", attempt: 1 })],
            "running",
          ],
          // A step in flight when paused commits its children: still paused; resumed, it waits.
          [
            [
              event("p2", 2, "step_started", { step: "start", attempt: 1 }),
              event("p2", 3, "workflow_paused", { reason: "x" }),
            ],
            "paused",
          ],
          [[fanOut("p2", 4)], "paused"],
          [
            [event("p2", 5, "event_received", { name: "ping", payload: null }), event("p2", 6, "workflow_resumed", {})],
            "waiting",
          ],
          // The last child's end wakes it; it is running once it claims the next step.
          [[finished("p2", 7, "c1"), finished("p2", 8, "c2")], "waiting"],
          [[event("p2", 9, "step_started", { step: "collect", attempt: 1 })], "running"],
        ];
        for (const [batch, status] of rows) {
          const runId = (batch[0] as StoredEvent).runId;
          expect(store.append(batch)).toEqual({ appended: true });
          const at = `${runId} after ${batch.map((e) => e.type).join(", ")}`;
          expect(store.getRun(runId)?.status, at).toBe(status);
          // The batches' fold agrees with the whole log's.
          expect(summaryOf(store.events(runId)).status, at).toBe(status);
          expect(store.activeRunIds().includes(runId), at).toBe(status === "running" || status === "waiting");
          expect(
            store.listRuns({ status: "waiting", limit: 10 }).runs.some((run) => run.id === runId),
            at,
          ).toBe(status === "waiting");
        }
        // Its children ended before the commit: the claim in the same batch makes it running.
        store.createRunIfNoActive(created("p3", "p3", "fan"));
        store.append([
          event("p3", 2, "step_started", { step: "start", attempt: 1 }),
          fanOut("p3", 3),
          event("p3", 4, "step_started", { step: "collect", attempt: 1 }),
        ]);
        expect(store.getRun("p3")?.status).toBe("running");
        expect(store.livePositions()).toContainEqual({ name: "fan", step: "collect", runs: 3 });
      },
    );

    storeCase("lists newest first, filters by name and status, and pages with cursor + limit", () => {
      const names = ["a", "b", "a", "a", "b", "a"];
      names.forEach((workflowName, i) => {
        store.createRunIfNoActive(created(`r${i}`, `w${i}`, workflowName, T0 + i));
      });
      store.append([event("r2", 2, "workflow_completed", { result: null }, "w2")]);

      expect(store.listRuns({ limit: 100 }).runs.map((r) => r.id)).toEqual(["r5", "r4", "r3", "r2", "r1", "r0"]);
      expect(store.listRuns({ name: "a", limit: 100 }).runs.map((r) => r.id)).toEqual(["r5", "r3", "r2", "r0"]);
      expect(store.listRuns({ name: "a", status: "running", limit: 100 }).runs.map((r) => r.id)).toEqual([
        "r5",
        "r3",
        "r0",
      ]);
      expect(store.listRuns({ status: "completed", limit: 100 }).runs.map((r) => r.id)).toEqual(["r2"]);

      const first = store.listRuns({ name: "a", limit: 2 });
      expect(first.runs.map((r) => r.id)).toEqual(["r5", "r3"]);
      expect(first.cursor).toEqual(expect.any(String));
      const second = store.listRuns({ name: "a", limit: 2, cursor: first.cursor });
      expect(second.runs.map((r) => r.id)).toEqual(["r2", "r0"]);
      expect(second.cursor).toBeUndefined();
      expect(thrownCode(() => store.listRuns({ limit: 2, cursor: "not-a-cursor" }))).toBe("invalid_input");
    });
  });
}
