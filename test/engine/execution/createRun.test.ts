import { describe, expect, it } from "vitest";
import { createRun } from "#src/engine/execution/createRun.ts";
import { defineWorkflow } from "#src/engine/api/definition.ts";
import { MAX_EVENT_PAYLOAD_BYTES } from "#src/engine/api/json.ts";
import { createMemoryEventStore } from "#src/engine/storage/memoryEventStore.ts";
import { thrown } from "#test/support/workflow/rejection.ts";

const greet = defineWorkflow("greet", { start: async () => ({ done: true }) });
const other = defineWorkflow("other", { start: async () => ({ done: true }) });
const NOW = 1_700_000_000_000;

describe("createRun (transition row: (none) → workflow_created)", () => {
  it("writes workflow_created as seq 1 with the start data under writes.data; the workflow id defaults to the run id", () => {
    const store = createMemoryEventStore();
    expect(createRun(store, greet, { name: "Ada" }, { runId: "r1", now: NOW })).toEqual({
      runId: "r1",
      workflowId: "r1",
      created: true,
    });
    expect(store.events("r1")).toEqual([
      {
        runId: "r1",
        workflowId: "r1",
        seq: 1,
        type: "workflow_created",
        payload: { workflowName: "greet", writes: { data: { name: "Ada" } } },
        at: NOW,
      },
    ]);
  });

  it("stores missing data as null", () => {
    const store = createMemoryEventStore();
    createRun(store, greet, undefined, { runId: "r1", now: NOW });
    expect(store.lastEvent("r1")?.payload).toEqual({ workflowName: "greet", writes: { data: null } });
  });

  it("returns the active run with created: false when the workflow id is taken, and a new run once it is terminal", () => {
    const store = createMemoryEventStore();
    createRun(store, greet, 1, { runId: "r1", workflowId: "order-42", now: NOW });
    expect(createRun(store, greet, 2, { runId: "r2", workflowId: "order-42", now: NOW })).toEqual({
      runId: "r1",
      workflowId: "order-42",
      created: false,
    });
    expect(store.events("r2")).toEqual([]);
    store.append([
      { runId: "r1", workflowId: "order-42", seq: 2, type: "workflow_completed", payload: { result: null }, at: NOW },
    ]);
    expect(createRun(store, greet, 3, { runId: "r3", workflowId: "order-42", now: NOW })).toEqual({
      runId: "r3",
      workflowId: "order-42",
      created: true,
    });
  });

  it("throws already_active (with activeRunId) when the id is active as a run of another workflow", () => {
    const store = createMemoryEventStore();
    createRun(store, greet, 1, { runId: "r1", workflowId: "order-42", now: NOW });
    const error = thrown(() => createRun(store, other, 1, { runId: "r2", workflowId: "order-42", now: NOW }));
    expect(error.code).toBe("already_active");
    expect(error.details).toMatchObject({ activeRunId: "r1", activeWorkflowName: "greet" });
  });

  const invalid: [string, unknown, string][] = [
    ["a function", { f: () => 1 }, "invalid_input"],
    ["a BigInt", 1n, "invalid_input"],
    ["NaN", { n: NaN }, "invalid_input"],
    ["undefined inside an object", { a: undefined }, "invalid_input"],
    ["a Date", new Date(), "invalid_input"],
    ["more than 1 MiB", "x".repeat(MAX_EVENT_PAYLOAD_BYTES), "payload_too_large"],
  ];
  for (const [what, data, code] of invalid) {
    it(`refuses start data that is ${what} with ${code}, appending nothing`, () => {
      const store = createMemoryEventStore();
      expect(thrown(() => createRun(store, greet, data, { runId: "r1", now: NOW })).code).toBe(code);
      expect(store.events("r1")).toEqual([]);
      expect(store.listRuns({ limit: 10 }).runs).toEqual([]);
    });
  }

  it("refuses empty, overlong or control-character ids", () => {
    const store = createMemoryEventStore();
    for (const workflowId of ["", "x".repeat(257), "a\nb"]) {
      expect(thrown(() => createRun(store, greet, null, { runId: "r1", workflowId, now: NOW })).code).toBe(
        "invalid_input",
      );
    }
    expect(thrown(() => createRun(store, greet, null, { runId: "", now: NOW })).code).toBe("invalid_input");
    expect(store.activeRunIds()).toEqual([]);
  });
});

describe("defineWorkflow", () => {
  const start = async () => ({ done: true as const });
  it.each([
    ["no start step", () => defineWorkflow("w", { begin: start })],
    ["a step that is not a function", () => defineWorkflow("w", { start, other: 1 as never })],
    ["a bad name", () => defineWorkflow("has space", { start })],
    ["maxAttempts 0", () => defineWorkflow("w", { start }, { maxAttempts: 0 })],
    ["a fractional maxAttempts", () => defineWorkflow("w", { start }, { maxAttempts: 1.5 })],
    ["a negative timeout", () => defineWorkflow("w", { start }, { stepTimeoutMS: -1 })],
    ["factor below 1", () => defineWorkflow("w", { start }, { backoff: { factor: 0.5 } })],
    ["maxMS below initialMS", () => defineWorkflow("w", { start }, { backoff: { initialMS: 10, maxMS: 5 } })],
    ["jitter above 1", () => defineWorkflow("w", { start }, { backoff: { jitter: 2 } })],
  ])("refuses %s with invalid_input", (_, define) => {
    expect(thrown(define).code).toBe("invalid_input");
  });

  it("fills unspecified options from the defaults and keeps given ones", () => {
    const definition = defineWorkflow("w", { start }, { backoff: { initialMS: 100, maxMS: 10_000, factor: 2 } });
    expect(definition).toMatchObject({
      maxAttempts: 3,
      stepTimeoutMS: 30_000,
      backoff: { initialMS: 100, maxMS: 10_000, factor: 2, jitter: 0.2 },
    });
  });
});
