import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { NonRetryableError } from "#src/engine/execution/nonRetryableError.ts";
import {
  getWorkflowDefinition,
  installWorkflowBackend,
  resetWorkflowsForTests,
  workflow,
} from "#src/engine/api/workflowApi.ts";
import { rejection, shape } from "#test/support/workflow/index.ts";
import {
  eventOf,
  type MakeWorkflowBackend,
  PAYLOAD_FIELDS,
  resultAfterRestart,
  pause,
  type RunView,
  viewWhen,
  type WorkflowBackendUnderTest,
} from "./workflowConformance.fixture.ts";

/**
 * exactly once; the parent waits (status `waiting`), woken by its children's
 * ends, then reads their outcomes in order; cancelling it cancels them;
 * pausing it lets them go on; restarts in between lose nothing.
 */

/** Waits until `workflow.list(filter)` lists exactly `expected` (the Durable Object index hears of runs by report). */
async function listedWhen(filter: Parameters<typeof workflow.list>[0], expected: string[]): Promise<void> {
  await vi.waitFor(
    async () => {
      const ids = (await workflow.list(filter)).runs.map((run) => run.id);
      expect(ids.sort()).toEqual([...expected].sort());
    },
    { timeout: 8000, interval: 10 },
  );
}
export function describeChildrenConformance(name: string, makeBackend: MakeWorkflowBackend): void {
  describe(`workflow conformance, child runs: ${name}`, () => {
    let subject: WorkflowBackendUnderTest;
    const opened = new Set<string>();
    const gate = async (id: string) => {
      while (!opened.has(id) && !opened.has("*")) await pause(2);
    };
    const restart = async () => {
      installWorkflowBackend(await subject.restart());
    };

    beforeEach(async () => {
      resetWorkflowsForTests();
      opened.clear();
      workflow("square", {
        start: async (ctx) => {
          if (ctx.data.gate !== undefined) await gate(ctx.data.gate);
          if (ctx.data.fail) throw new NonRetryableError(`no square for ${ctx.data.n}`);
          return { done: true, result: ctx.data.n * ctx.data.n };
        },
      });
      workflow(
        "fan-out",
        {
          start: async (ctx) => ({
            step: "collect",
            children: Array.from({ length: ctx.data.count }, (_, n) => ({
              workflow: "square",
              data: { n, ...(ctx.data.gate === undefined ? {} : { gate: ctx.data.gate }), fail: ctx.data.fail === n },
              ...(ctx.data.id === undefined ? {} : { id: ctx.data.id }),
            })),
          }),
          collect: async (ctx) => ({ done: true, result: ctx.children }),
        },
        { stepTimeoutMS: 10_000 },
      );
      workflow(
        "one-at-a-time",
        {
          start: async (ctx) => ({ step: "collect", children: [{ workflow: "square", data: ctx.data }] }),
          collect: async (ctx) => ({ done: true, result: ctx.children?.[0]?.result }),
        },
        { concurrency: { limit: 1 } },
      );
      workflow("bad-children", {
        start: async (ctx) => ({ step: "start", children: ctx.data }),
      });
      // A chain of children, `left` more levels deep; each level passes its child's failure up.
      workflow("recurse", {
        start: async (ctx) =>
          ctx.data.left === 0
            ? { done: true, result: "bottom" }
            : { step: "collect", children: [{ workflow: "recurse", data: { left: ctx.data.left - 1 } }] },
        collect: async (ctx) => {
          const child = ctx.children?.[0];
          if (child?.status !== "completed") throw new NonRetryableError(child?.error ?? "no child");
          return { done: true, result: child.result };
        },
      });
      subject = await makeBackend(getWorkflowDefinition);
      installWorkflowBackend(subject.backend);
    });

    afterEach(async () => {
      opened.add("*");
      await subject.close();
      resetWorkflowsForTests();
    });

    it("fans out to 20 children and reads their results in order; each side names the other", async () => {
      const parent = await workflow.start("fan-out", { count: 20 });
      const outcomes = (await parent.result()) as { runId: string; workflow: string; status: string; result: number }[];
      expect(outcomes.map((child) => child.result)).toEqual(Array.from({ length: 20 }, (_, n) => n * n));
      expect(outcomes.every((child) => child.status === "completed" && child.workflow === "square")).toBe(true);
      expect(new Set(outcomes.map((child) => child.runId)).size).toBe(20);
      const view = (await workflow.get(parent.id)) as RunView;
      const completed = eventOf(view, "step_completed", "start");
      expect(completed.payload.children?.map((child) => child.run_id)).toEqual(outcomes.map((child) => child.runId));
      expect(completed.continuation).toMatchObject({ kind: "children", step: "collect" });
      expect(view.children?.map((child) => child.runId)).toEqual(outcomes.map((child) => child.runId));
      expect(view.events.filter((event) => event.type === "child_finished")).toHaveLength(20);
      const child = (await workflow.get(outcomes[3]?.runId as string)) as RunView;
      expect(child).toMatchObject({ parentRunId: parent.id, status: "completed", result: 9, name: "square" });
      expect(child.workflowId).toBe(`${parent.id}.0.3`);
      for (const event of view.events)
        for (const key of Object.keys(event.payload)) expect(PAYLOAD_FIELDS[event.type]).toContain(key);
    });

    it("waits for its children (status waiting, progress in its view), and a child's failure does not fail it", async () => {
      const parent = await workflow.start("fan-out", { count: 3, gate: "slow", fail: 1 });
      const waiting = await viewWhen(parent.id, (v) => v.waitingForChildren !== undefined);
      expect(waiting).toMatchObject({
        status: "waiting",
        step: "collect",
        waitingForChildren: { total: 3, finished: 0 },
      });
      expect(waiting.children?.map((child) => child.status)).toEqual(["running", "running", "running"]);
      // The parent alone is waiting; its children run.
      await listedWhen({ status: "waiting" }, [parent.id]);
      await listedWhen({ status: "running", name: "square" }, waiting.children?.map((child) => child.runId) ?? []);
      expect((await workflow.get(parent.id))?.status).toBe("waiting");
      // A waiting parent needs its next step: code without it would strand the parent.
      const next = [
        { name: "fan-out", steps: ["start"] },
        { name: "square", steps: ["start"] },
      ];
      expect(await subject.backend.findStrandedRuns(next)).toEqual({
        count: 1,
        runs: [{ runId: parent.id, workflow: "fan-out", step: "collect", status: "waiting", missing: "step" }],
      });
      opened.add("slow");
      const outcomes = (await parent.result()) as { status: string; result?: number; error?: string }[];
      expect(outcomes).toEqual([
        expect.objectContaining({ status: "completed", result: 0 }),
        expect.objectContaining({ status: "failed", error: "no square for 1" }),
        expect.objectContaining({ status: "completed", result: 4 }),
      ]);
      const done = (await workflow.get(parent.id)) as RunView;
      expect(done).toMatchObject({ status: "completed" });
      expect(done.waitingForChildren).toBeUndefined();
      // Woken, it claimed its next step (running again) and completed.
      expect(shape(done.events.filter((event) => event.type !== "child_finished")).slice(-3)).toEqual([
        "step_started(collect,1)",
        "step_completed(collect)",
        "workflow_completed",
      ]);
      await listedWhen({ status: "waiting" }, []);
    });

    it("cancelling the parent during the fan-out cancels its running children", async () => {
      const parent = await workflow.start("fan-out", { count: 5, gate: "never" });
      const waiting = await viewWhen(parent.id, (v) => v.waitingForChildren !== undefined);
      expect(waiting.status).toBe("waiting");
      expect(await workflow.cancel(parent.id, "stop")).toMatchObject({ status: "cancelled", cancelReason: "stop" });
      for (const child of waiting.children ?? []) {
        const view = await viewWhen(child.runId, (v) => v.status !== "running");
        expect(view).toMatchObject({ status: "cancelled", parentRunId: parent.id });
      }
      expect((await workflow.get(parent.id))?.status).toBe("cancelled");
      expect((await workflow.list({ status: "running" })).runs).toEqual([]);
      await listedWhen({ status: "waiting" }, []);
    });

    it("a waiting parent may be paused: its children go on; resume makes it waiting again, or goes on once they ended", async () => {
      const parent = await workflow.start("fan-out", { count: 2, gate: "first" });
      await viewWhen(parent.id, (v) => v.status === "waiting");
      const paused = await workflow.pause(parent.id, "look first");
      expect(paused).toMatchObject({ status: "paused", paused: { reason: "look first" } });
      await listedWhen({ status: "paused" }, [parent.id]);
      await listedWhen({ status: "waiting" }, []);
      const resumed = await workflow.resume(parent.id);
      expect(resumed).toMatchObject({ status: "waiting", waitingForChildren: { total: 2, finished: 0 } });
      await listedWhen({ status: "waiting" }, [parent.id]);
      // Paused again, the children end: their ends are recorded, but the parent claims nothing until resumed.
      await workflow.pause(parent.id);
      opened.add("first");
      const heard = await viewWhen(parent.id, (v) => v.events.filter((e) => e.type === "child_finished").length === 2);
      expect(heard.status).toBe("paused");
      expect(heard.events.some((event) => event.type === "step_started" && event.payload.step === "collect")).toBe(
        false,
      );
      await workflow.resume(parent.id);
      expect(((await parent.result()) as { result: number }[]).map((child) => child.result)).toEqual([0, 1]);
      await listedWhen({ status: "completed", name: "fan-out" }, [parent.id]);
    });

    it("a waiting parent holds its concurrency slot: the next run of its key stays queued until it ends", async () => {
      const first = await workflow.start("one-at-a-time", { n: 2, gate: "slot" });
      await viewWhen(first.id, (v) => v.status === "waiting");
      const second = await workflow.start("one-at-a-time", { n: 3 });
      expect((await workflow.get(second.id))?.status).toBe("queued");
      opened.add("slot");
      expect(await first.result()).toBe(4);
      expect(await second.result()).toBe(9);
      const started = (await workflow.get(second.id)) as RunView;
      expect(eventOf(started, "workflow_dequeued").at).toBeGreaterThanOrEqual(
        (await workflow.get(first.id))?.updatedAt ?? Number.POSITIVE_INFINITY,
      );
    });

    it("a child that ends while the parent's host restarts still wakes it; the restart starts no child twice", async () => {
      const parent = await workflow.start("fan-out", { count: 4, gate: "restart" });
      const waiting = await viewWhen(parent.id, (v) => v.waitingForChildren !== undefined);
      await restart();
      opened.add("restart");
      const result = await resultAfterRestart(parent.id);
      expect((result as { result: number }[]).map((child) => child.result)).toEqual([0, 1, 4, 9]);
      const squares = await workflow.list({ name: "square", limit: 100 });
      expect(squares.runs.map((run) => run.id).sort()).toEqual(
        (waiting.children ?? []).map((child) => child.runId).sort(),
      );
    });

    it("two parents starting a child with the same id: one child runs; the other parent reads it as refused", async () => {
      const [a, b] = await Promise.all([
        workflow.start("fan-out", { count: 1, gate: "shared", id: "shared-child" }),
        workflow.start("fan-out", { count: 1, gate: "shared", id: "shared-child" }),
      ]);
      await viewWhen(a.id, (v) => v.waitingForChildren !== undefined || v.status !== "running");
      await viewWhen(b.id, (v) => v.waitingForChildren !== undefined || v.status !== "running");
      opened.add("shared");
      const outcomes = [
        ((await a.result()) as { runId: string; status: string; error?: string }[])[0],
        ((await b.result()) as { runId: string; status: string; error?: string }[])[0],
      ];
      const squares = (await workflow.list({ name: "square" })).runs;
      expect(squares).toHaveLength(1);
      expect(squares[0]?.workflowId).toBe("shared-child");
      const ran = outcomes.filter((child) => child?.status === "completed");
      const refused = outcomes.filter((child) => child?.status === "failed");
      expect(ran).toHaveLength(1);
      expect(refused).toHaveLength(1);
      expect(refused[0]?.error).toMatch(/held by active run/);
      expect(refused[0]?.runId).toBe(squares[0]?.id);
      expect((await workflow.get(squares[0]?.id as string))?.parentRunId).toBe(ran[0] === outcomes[0] ? a.id : b.id);
    });

    it("refuses a 40-deep recursion at depth 33: that step fails without retry and no deeper run starts", async () => {
      const root = await workflow.start("recurse", { left: 40 });
      const error = await rejection(root.result());
      expect(error.message).toMatch(
        /its children would be at depth 33, past the platform's limit of 32 nested child runs/,
      );
      await vi.waitFor(
        async () => expect((await workflow.list({ name: "recurse", limit: 100 })).runs).toHaveLength(33),
        { timeout: 8000, interval: 20 },
      );
      const runs = (await workflow.list({ name: "recurse", limit: 100 })).runs;
      const refused: RunView[] = [];
      for (const run of runs) {
        const view = (await workflow.get(run.id)) as RunView;
        if (shape(view.events).includes("step_failed(start,1,final)")) refused.push(view);
      }
      expect(refused).toHaveLength(1);
      expect(refused[0]?.error).toMatch(/is a child at depth 32; its children would be at depth 33/);
    }, 60_000);

    it("allows children 32 deep", async () => {
      const root = await workflow.start("recurse", { left: 32 });
      expect(await root.result()).toBe("bottom");
    }, 60_000);

    it("refuses bad children without retry, naming the entry", async () => {
      for (const [children, message] of [
        [[], /1 to 1000 children/],
        [Array.from({ length: 1001 }, () => ({ workflow: "square" })), /1 to 1000 children/],
        [[{ data: 1 }], /children\[0\]\.workflow must name/],
        [
          [
            { workflow: "square", id: "x" },
            { workflow: "square", id: "x" },
          ],
          /children\[1\]\.id "x" is given to another child/,
        ],
        [[{ workflow: "nope" }], /No workflow named "nope"/],
      ] as const) {
        const run = await workflow.start("bad-children", children);
        const error = await rejection(run.result());
        expect(error.message).toMatch(message);
        const view = (await workflow.get(run.id)) as RunView;
        expect(shape(view.events).slice(-2)).toEqual(["step_failed(start,1,final)", "workflow_failed"]);
      }
      expect((await workflow.list({ name: "square" })).runs).toEqual([]);
    });
  });
}
