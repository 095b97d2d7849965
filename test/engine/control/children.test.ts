import { describe, expect, it, vi } from "vitest";
import { PlatformError } from "#src/core/errors.ts";
import {
  activeChildrenOf,
  type ChildRunPort,
  childFinishedOf,
  childReportOf,
  childRequestsOf,
  createChildRun,
  createChildrenFold,
  createParentLog,
  recordChildFinished,
} from "#src/engine/control/children.ts";
import { createRun } from "#src/engine/execution/createRun.ts";
import { defineWorkflow } from "#src/engine/api/definition.ts";
import { executeRun } from "#src/engine/execution/executeRun.ts";
import { createMemoryEventStore } from "#src/engine/storage/memoryEventStore.ts";
import { resolveNextAction } from "#src/engine/execution/resolveNextAction.ts";
import { cancelRun } from "#src/engine/control/runControl.ts";
import { manualClock, shape } from "#test/support/workflow/index.ts";

const where = 'Step "start" of workflow "w"';

describe("childRequestsOf: what a step may ask for", () => {
  it("derives each child's key (and workflow id unless given) from the parent's run, completed steps and index", () => {
    const definition = defineWorkflow("resize", { start: () => ({ done: true }) });
    expect(
      childRequestsOf(
        {
          step: "next",
          children: [
            { workflow: "resize", data: { n: 1 } },
            { workflow: definition, id: "img-7" },
          ],
        },
        "parent",
        2,
        where,
      ),
    ).toEqual([
      { workflow: "resize", data: { n: 1 }, workflowId: "parent.2.0", key: "parent.2.0" },
      { workflow: "resize", data: null, workflowId: "img-7", key: "parent.2.1" },
    ]);
    expect(childRequestsOf({ step: "next" }, "parent", 0, where)).toBeNull();
  });

  it.each([
    [[], "returned children that is not a list of 1 to 1000 children"],
    ["resize", "returned children that is not a list of 1 to 1000 children"],
    [Array.from({ length: 1001 }, () => ({ workflow: "w" })), "not a list of 1 to 1000 children"],
    [[null], "children[0] must be an object like { workflow"],
    [[{ workflow: "" }], "children[0].workflow must name a registered workflow"],
    [[{ workflow: "w", id: "" }], 'The workflow id of Step "start" of workflow "w" children[0] must be a string'],
    [
      [
        { workflow: "w", id: "x" },
        { workflow: "w", id: "x" },
      ],
      'children[1].id "x" is given to another child too',
    ],
    [[{ workflow: "w", data: { when: new Date(0) } }], "data of Step"],
  ])("refuses %j with invalid_input naming the entry", (children, message) => {
    let thrown: unknown;
    try {
      childRequestsOf({ step: "next", children }, "parent", 0, where);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(PlatformError);
    expect(thrown).toMatchObject({ code: "invalid_input" });
    expect((thrown as Error).message).toContain(message);
  });
});

describe("createChildRun: exactly once", () => {
  const square = defineWorkflow("square", { start: () => ({ done: true }) });
  const child = { runId: "p.0.0", workflowId: "p.0.0", data: 1, parentRunId: "p" };

  it("creates the child once; starting it again answers the same run, active or ended", () => {
    const store = createMemoryEventStore();
    expect(createChildRun(store, square, child, 1)).toEqual({
      ref: { runId: "p.0.0", workflow: "square" },
      created: true,
    });
    expect(store.events("p.0.0")[0]?.payload).toEqual({
      workflowName: "square",
      writes: { data: 1 },
      parent_run_id: "p",
    });
    expect(createChildRun(store, square, child, 2)).toEqual({
      ref: { runId: "p.0.0", workflow: "square" },
      created: false,
    });
    cancelRun(store, { runId: "p.0.0", reason: "done", now: 3 });
    expect(createChildRun(store, square, child, 4).created).toBe(false);
    expect(store.listRuns({ limit: 10 }).runs).toHaveLength(1);
  });

  it("refuses a workflow id another active run holds, naming that run", () => {
    const store = createMemoryEventStore();
    createRun(store, square, null, { runId: "other", workflowId: "shared", now: 1 });
    expect(createChildRun(store, square, { ...child, workflowId: "shared" }, 2)).toEqual({
      ref: {
        runId: "other",
        workflow: "square",
        refused:
          'Workflow id "shared" is held by active run "other", which is not this run\'s child; the child was not started',
      },
      created: false,
    });
    expect(store.getRun("p.0.0")).toBeNull();
  });
});

describe("the parent's log: child_finished and what the resolver makes of it", () => {
  const square = defineWorkflow("square", { start: () => ({ done: true, result: 4 }) });
  const fan = defineWorkflow("fan", {
    start: () => ({ step: "collect", children: [{ workflow: "square" }, { workflow: "square" }] }),
    collect: (ctx) => ({ done: true, result: ctx.children }),
  });

  /** A port over the same store that starts children without running them (the test ends them). */
  function setup() {
    const store = createMemoryEventStore();
    const clock = manualClock();
    const cancelled: string[] = [];
    const port: ChildRunPort = {
      async start(parentRunId, children) {
        return children.map(
          (c) =>
            createChildRun(store, square, { runId: c.key, workflowId: c.workflowId, data: c.data, parentRunId }, 1).ref,
        );
      },
      async cancel(runIds) {
        cancelled.push(...runIds);
      },
    };
    createRun(store, fan, null, { runId: "p", now: clock.now() });
    const run = () => executeRun(store, fan, "p", { now: clock.now, children: port });
    const end = (runId: string) => {
      store.append([
        { runId, workflowId: runId, seq: 2, type: "workflow_completed", payload: { result: 4 }, at: clock.now() },
      ]);
      const report = childReportOf(store.events(runId));
      if (!report) throw new Error("no report");
      return recordChildFinished(store, { ...report, now: clock.now() });
    };
    return { store, run, end, cancelled };
  }

  it("waits (idle) until the last child ended, then runs the next step with ctx.children in order", async () => {
    const { store, run, end } = setup();
    expect(await run()).toEqual({ status: "idle" });
    expect(store.lastEvent("p")?.payload).toEqual({
      step: "start",
      writes: {},
      next_step: "collect",
      children: [
        { run_id: "p.0.0", workflow: "square" },
        { run_id: "p.0.1", workflow: "square" },
      ],
    });
    expect(end("p.0.1")).toEqual({ appended: true, allFinished: false });
    expect(await run()).toEqual({ status: "idle" });
    expect(end("p.0.0")).toEqual({ appended: true, allFinished: true });
    expect(await run()).toEqual({ status: "terminal" });
    expect(shape(store.events("p"))).toEqual([
      "workflow_created",
      "step_started(start,1)",
      "step_completed(start->collect)",
      "child_finished",
      "child_finished",
      "step_started(collect,1)",
      "step_completed(collect)",
      "workflow_completed",
    ]);
    expect(store.lastEvent("p")?.payload).toEqual({
      result: [
        { runId: "p.0.0", workflow: "square", status: "completed", result: 4 },
        { runId: "p.0.1", workflow: "square", status: "completed", result: 4 },
      ],
    });
  });

  it("records each child's end once, and none after the parent ended", async () => {
    const { store, run, end } = setup();
    await run();
    end("p.0.0");
    const again = childReportOf(store.events("p.0.0"));
    expect(again?.parentRunId).toBe("p");
    expect(recordChildFinished(store, { parentRunId: "p", finished: again!.finished, now: 5 })).toEqual({
      appended: false,
      allFinished: false,
    });
    cancelRun(store, { runId: "p", reason: "stop", now: 6 });
    expect(end("p.0.1")).toEqual({ appended: false, allFinished: false });
    expect(store.events("p").filter((event) => event.type === "child_finished")).toHaveLength(1);
    expect(activeChildrenOf(store.events("p"))).toEqual(["p.0.1"]);
  });

  it("a child whose result would not fit in its parent's event tells the parent where to read it", () => {
    const big = "x".repeat(1024 * 1024 - 100);
    const end = {
      runId: "c",
      workflowId: "c",
      seq: 3,
      type: "workflow_completed" as const,
      at: 1,
      payload: { result: big },
    };
    expect(childFinishedOf("c", "square", end)).toEqual({
      run_id: "c",
      workflow: "square",
      status: "completed",
      error: `The child's result (${big.length + 2} bytes) is too large to pass to its parent; read it with workflow.get("c")`,
    });
    expect(childFinishedOf("c", "square", { ...end, payload: { result: 4 } })).toEqual({
      run_id: "c",
      workflow: "square",
      status: "completed",
      result: 4,
    });
  });

  it("with the host's ParentLog, each call reads only the events appended since the last one", async () => {
    const { store, run } = setup();
    await run();
    const log = createParentLog();
    const reads = vi.spyOn(store, "events");
    const finished = (runId: string) => ({
      run_id: runId,
      workflow: "square",
      status: "completed" as const,
      result: 4,
    });
    expect(recordChildFinished(store, { parentRunId: "p", finished: finished("p.0.0"), now: 5, log })).toEqual({
      appended: true,
      allFinished: false,
    });
    expect(recordChildFinished(store, { parentRunId: "p", finished: finished("p.0.1"), now: 6, log })).toEqual({
      appended: true,
      allFinished: true,
    });
    expect(reads.mock.calls.filter(([id]) => id === "p").map(([, after]) => after)).toEqual([0, 4]);
    expect(log.last?.seq).toBe(5);
  });

  it("a retried fan-out step finds the same children (a crash between starting and committing starts none twice)", async () => {
    const store = createMemoryEventStore();
    const flaky = defineWorkflow(
      "fan",
      {
        start: () => ({ step: "collect", children: [{ workflow: "square" }, { workflow: "square" }] }),
        collect: () => ({ done: true }),
      },
      { backoff: { initialMS: 0, jitter: 0 } },
    );
    createRun(store, flaky, null, { runId: "p", now: 1 });
    let failOnce = true;
    const port: ChildRunPort = {
      async start(parentRunId, children) {
        const refs = children.map(
          (c) =>
            createChildRun(store, square, { runId: c.key, workflowId: c.workflowId, data: c.data, parentRunId }, 1).ref,
        );
        // The children exist; the host loses its answer before the completion is written.
        if (failOnce) {
          failOnce = false;
          throw new Error("lost the connection");
        }
        return refs;
      },
      async cancel() {},
    };
    await executeRun(store, flaky, "p", { now: () => 10, children: port });
    expect(shape(store.events("p")).slice(1)).toEqual([
      "step_started(start,1)",
      "step_failed(start,1,retryable)",
      "step_started(start,2)",
      "step_completed(start->collect)",
    ]);
    expect(
      store
        .listRuns({ name: "square", limit: 10 })
        .runs.map((r) => r.id)
        .sort(),
    ).toEqual(["p.0.0", "p.0.1"]);
  });

  it("a completion that loses its seq to a cancel cancels the children it started", async () => {
    const { store, cancelled } = setup();
    const port: ChildRunPort = {
      async start(parentRunId, children) {
        cancelRun(store, { runId: "p", reason: "stop", now: 2 });
        return children.map((c) => ({ runId: `${parentRunId}-${c.key}`, workflow: c.workflow }));
      },
      async cancel(runIds) {
        cancelled.push(...runIds);
      },
    };
    await executeRun(store, fan, "p", { now: () => 10, children: port });
    expect(cancelled).toEqual(["p-p.0.0", "p-p.0.1"]);
    expect(shape(store.events("p")).slice(-1)).toEqual(["workflow_cancelled"]);
  });

  it("fails the step without retry when the host cannot start children", async () => {
    const store = createMemoryEventStore();
    createRun(store, fan, null, { runId: "p", now: 1 });
    await executeRun(store, fan, "p", { now: () => 2 });
    expect(store.events("p").at(-2)?.payload).toMatchObject({
      reason: 'Step "start" of workflow "fan" returned children, which this host cannot start',
      retryable: false,
    });
  });

  it("the resolver: wait_for_children while a started child has not ended; refused children are not waited for", () => {
    const completed = {
      runId: "p",
      workflowId: "p",
      seq: 3,
      type: "step_completed" as const,
      at: 1,
      payload: {
        step: "start",
        writes: {},
        next_step: "collect",
        children: [
          { run_id: "a", workflow: "w" },
          { run_id: "b", workflow: "w", refused: "held" },
        ],
      },
    };
    expect(resolveNextAction(completed, 3)).toEqual({ kind: "wait_for_children", step: "collect", pending: ["a"] });
    expect(resolveNextAction(completed, 3, { finished: new Set(["a"]) })).toEqual({
      kind: "start_step",
      step: "collect",
      attempt: 1,
    });
    const fold = createChildrenFold([completed]);
    fold.apply({
      ...completed,
      seq: 4,
      type: "child_finished",
      payload: { run_id: "a", workflow: "w", status: "failed", error: "no" },
    });
    expect(fold.outcomes()).toEqual([
      { runId: "a", workflow: "w", status: "failed", error: "no" },
      { runId: "b", workflow: "w", status: "failed", error: "held" },
    ]);
  });
});
