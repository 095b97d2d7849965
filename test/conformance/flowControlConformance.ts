import { describe, expect, it } from "vitest";
import type { RunEventView, WorkflowRunView } from "#src/engine/execution/describeRun.ts";
import { workflow, type WorkflowRun } from "#src/engine/api/workflowApi.ts";
import { maxActive, startedAt } from "#test/support/workflow/activeRuns.ts";
import type { MakeWorkflowBackend } from "#test/conformance/workflowConformance.ts";
import { pollingGates, useBackendUnderTest } from "#test/conformance/workflowConformance.fixture.ts";

/**
 * Flow control per key and idempotency keys (beyond the spec), on every backend: the limits are
 * checked from the runs' own event times (the backend's clock), never from the test's.
 */
export function describeFlowControlConformance(name: string, makeBackend: MakeWorkflowBackend): void {
  describe(`flow control and idempotency keys: ${name}`, () => {
    const gates = pollingGates();
    const underTest = useBackendUnderTest(makeBackend, gates, () => {
      workflow(
        "perCustomer",
        {
          start: async (ctx) => {
            await new Promise((resolve) => setTimeout(resolve, 3));
            return { done: true, result: ctx.data };
          },
        },
        { concurrency: { limit: 2, key: (data: { customer: string }) => data.customer } },
      );
      workflow(
        "oneAtATime",
        {
          start: async (ctx) => {
            await gates.wait(ctx.data.gate);
            return { done: true, result: ctx.data.gate };
          },
        },
        { concurrency: { limit: 1 }, stepTimeoutMS: 10_000 },
      );
      workflow(
        "debounced",
        { start: async (ctx) => ({ done: true, result: ctx.data }) },
        { debounce: { periodMS: 300, key: (data: { customer: string }) => data.customer } },
      );
      workflow(
        "throttled",
        { start: async (ctx) => ({ done: true, result: ctx.data }) },
        { throttle: { limit: 2, periodMS: 150 } },
      );
      workflow("plain", { start: async (ctx) => ({ done: true, result: ctx.data }) });
    });

    it("50 concurrent starts for a key with limit 2: never more than 2 active, all complete, in arrival order; another key is not held back", async () => {
      const runs = await Promise.all([
        ...Array.from({ length: 50 }, (_, n) => workflow.start("perCustomer", { customer: "acme", n })),
        ...Array.from({ length: 4 }, (_, n) => workflow.start("perCustomer", { customer: "zeta", n })),
      ]);
      expect(runs.every((run) => run.created)).toBe(true);
      const results = await Promise.all(runs.map((run) => run.result()));
      expect(results.map((r) => `${r.customer}${r.n}`)).toEqual(
        runs.map((_, i) => (i < 50 ? `acme${i}` : `zeta${i - 50}`)),
      );
      const views = await viewsOf(runs);
      const acme = views.slice(0, 50);
      expect(maxActive(acme)).toBe(2);
      expect(maxActive(views.slice(50))).toBeLessThanOrEqual(2);
      // Some waited in the queue, and a queued run started only after one of its key ended.
      const dequeued = acme.filter((view) => view.events.some((e) => e.type === "workflow_dequeued"));
      expect(dequeued.length).toBeGreaterThanOrEqual(48);
      // Zeta's runs all started before acme's queue was through.
      const lastAcmeStart = Math.max(...acme.map(startedAt));
      expect(Math.max(...views.slice(50).map(startedAt))).toBeLessThanOrEqual(lastAcmeStart);
      // 54 actors made at once in workerd's test isolate take seconds; the checks above are on the runs' own times.
    }, 60_000);

    it("a queued run says what it waits for, starts when the slot frees, and a cancelled one gives up its place", async () => {
      const first = await workflow.start("oneAtATime", { gate: "a" });
      const second = await workflow.start("oneAtATime", { gate: "b" });
      const third = await workflow.start("oneAtATime", { gate: "c" });
      const queued = await workflow.get(second.id);
      expect(queued?.status).toBe("queued");
      expect(queued?.queued).toMatchObject({ key: "", ahead: 0 });
      expect(queued?.queued?.waitsFor).toMatch(/concurrency slot: 1 of 1 runs of key "" are active/);
      expect((await workflow.get(third.id))?.queued).toMatchObject({ ahead: 1 });
      expect((await workflow.list({ name: "oneAtATime", status: "queued" })).runs.map((r) => r.id).sort()).toEqual(
        [second.id, third.id].sort(),
      );
      expect((await workflow.cancel(second.id, "not needed")).status).toBe("cancelled");
      gates.open("a");
      gates.open("c");
      await expect(first.result()).resolves.toBe("a");
      await expect(third.result()).resolves.toBe("c");
      const [firstView, secondView, thirdView] = await viewsOf([first, second, third]);
      expect(secondView!.events.map((e) => e.type)).toEqual(["workflow_created", "workflow_cancelled"]);
      expect(thirdView!.events.map((e) => e.type).slice(0, 3)).toEqual([
        "workflow_created",
        "workflow_dequeued",
        "step_started",
      ]);
      expect(eventAt(thirdView!, "workflow_dequeued")).toBeGreaterThanOrEqual(
        eventAt(firstView!, "workflow_completed"),
      );
    });

    it("a start the key holds already (a scheduled tick delivered twice) answers that run and frees no slot", async () => {
      const first = await workflow.start("oneAtATime", { gate: "h1" });
      const tick = { id: "oneAtATime@2026-11-25T10:00:00.000Z", once: true };
      const queued = await underTest.subject.backend.start("oneAtATime", { gate: "h2" }, tick);
      const again = await underTest.subject.backend.start("oneAtATime", { gate: "h2" }, tick);
      expect(again).toMatchObject({ runId: queued.runId, created: false });
      const third = await workflow.start("oneAtATime", { gate: "h3" });
      expect((await workflow.get(queued.runId))?.status).toBe("queued");
      expect(await workflow.get(third.id)).toMatchObject({ status: "queued", queued: { ahead: 1 } });
      gates.open("h1");
      gates.open("h2");
      gates.open("h3");
      const views = await Promise.all([first.id, queued.runId, third.id].map(untilEnded));
      expect(views.map((view) => view.status)).toEqual(["completed", "completed", "completed"]);
      expect(maxActive(views)).toBe(1);
    });

    it("race: a queued run cancelled as its turn comes is cancelled either way, and the next one still starts", async () => {
      const first = await workflow.start("oneAtATime", { gate: "r1" });
      const second = await workflow.start("oneAtATime", { gate: "r2" });
      const third = await workflow.start("oneAtATime", { gate: "r3" });
      gates.open("r1");
      const [cancelled] = await Promise.all([workflow.cancel(second.id, "raced"), first.result()]);
      expect(cancelled.status).toBe("cancelled");
      gates.open("r2");
      gates.open("r3");
      await expect(third.result()).resolves.toBe("r3");
      const views = await Promise.all([first.id, second.id, third.id].map(untilEnded));
      expect(views.map((view) => view.status)).toEqual(["completed", "cancelled", "completed"]);
      expect(maxActive(views.filter((view) => view.events.some((e) => e.type === "step_started")))).toBe(1);
    });

    it("queued runs survive a restart and start in arrival order once the slot frees", async () => {
      const first = await workflow.start("oneAtATime", { gate: "a" });
      const second = await workflow.start("oneAtATime", { gate: "b" });
      const third = await workflow.start("oneAtATime", { gate: "c" });
      expect((await workflow.get(third.id))?.status).toBe("queued");
      await underTest.restart();
      gates.open("a");
      await untilEnded(first.id);
      gates.open("b");
      await untilEnded(second.id);
      expect((await workflow.get(third.id))?.status).toMatch(/queued|running/);
      gates.open("c");
      const [, secondView, thirdView] = await Promise.all([first.id, second.id, third.id].map(untilEnded));
      expect(secondView!.status).toBe("completed");
      expect(thirdView!.status).toBe("completed");
      expect(eventAt(thirdView!, "workflow_dequeued")).toBeGreaterThanOrEqual(
        eventAt(secondView!, "workflow_completed"),
      );
    });

    it("a queued run cannot be paused (it has not started; it stays queued and runs in its turn)", async () => {
      const first = await workflow.start("oneAtATime", { gate: "a" });
      const second = await workflow.start("oneAtATime", { gate: "b" });
      expect((await workflow.get(second.id))?.status).toBe("queued");
      const refused = await workflow.pause(second.id, "hold on").then(
        () => null,
        (error: { code?: string; message?: string }) => error,
      );
      expect(refused?.code).toBe("conflict");
      expect(refused?.message).toMatch(/is queued and has not started/);
      expect((await workflow.get(second.id))?.status).toBe("queued");
      gates.open("*");
      await expect(first.result()).resolves.toBe("a");
      await expect(second.result()).resolves.toBe("b");
      expect((await workflow.get(second.id))!.events.map((e) => e.type)).not.toContain("workflow_paused");
    });

    it("a rerun of a debounced run starts with the data the run ran with (the last start's)", async () => {
      const runs: WorkflowRun[] = [];
      for (let n = 0; n < 3; n++) runs.push(await workflow.start("debounced", { customer: "acme", n }));
      await expect(runs[2]!.result()).resolves.toEqual({ customer: "acme", n: 2 });
      const rerun = await workflow.rerun(runs[0]!.id);
      await expect(rerun.result()).resolves.toEqual({ customer: "acme", n: 2 });
    });

    it("debounce: 5 starts in quick succession start one run, with the last data, after a quiet period", async () => {
      const runs: WorkflowRun[] = [];
      for (let n = 0; n < 5; n++) runs.push(await workflow.start("debounced", { customer: "acme", n }));
      const other = await workflow.start("debounced", { customer: "zeta", n: 0 });
      expect(new Set(runs.map((run) => run.id)).size).toBe(1);
      expect(runs.map((run) => run.created)).toEqual([true, false, false, false, false]);
      expect(other.id).not.toBe(runs[0]!.id);
      await expect(runs[4]!.result()).resolves.toEqual({ customer: "acme", n: 4 });
      await expect(other.result()).resolves.toEqual({ customer: "zeta", n: 0 });
      const view = (await workflow.get(runs[0]!.id))!;
      expect(view.events.map((e) => e.type)).toEqual([
        "workflow_created",
        "start_replaced",
        "start_replaced",
        "start_replaced",
        "start_replaced",
        "workflow_dequeued",
        "step_started",
        "step_completed",
        "workflow_completed",
      ]);
      const lastStart = view.events.findLast((e) => e.type === "start_replaced")!.at;
      expect(eventAt(view, "workflow_dequeued")).toBeGreaterThanOrEqual(lastStart + 300);
      expect((await workflow.list({ name: "debounced" })).runs).toHaveLength(2);
    });

    it("throttle: at most 2 runs start within any 150 ms; the rest wait and all complete", async () => {
      const runs = await Promise.all(Array.from({ length: 5 }, (_, n) => workflow.start("throttled", { n })));
      await Promise.all(runs.map((run) => run.result()));
      const starts = (await viewsOf(runs)).map(startedAt).sort((a, b) => a - b);
      for (let i = 2; i < starts.length; i++) expect(starts[i]! - starts[i - 2]!).toBeGreaterThanOrEqual(150);
    });

    it("idempotency keys: a start with the same key answers the first run, active or ended, until its window closes", async () => {
      const first = await workflow.start("plain", { n: 1 }, { idempotencyKey: "order-42" });
      expect(first.created).toBe(true);
      await expect(first.result()).resolves.toEqual({ n: 1 });
      const again = await workflow.start("plain", { n: 2 }, { idempotencyKey: "order-42" });
      expect(again).toMatchObject({ id: first.id, created: false });
      await expect(again.result()).resolves.toEqual({ n: 1 });
      const other = await workflow.start("plain", { n: 3 }, { idempotencyKey: "order-43" });
      expect(other.created).toBe(true);
      expect((await workflow.get(first.id))?.idempotency?.key).toBe("order-42");

      const short = await workflow.start("plain", { n: 4 }, { idempotencyKey: "brief", idempotencyTTLMS: 20 });
      await short.result();
      const until = (await workflow.get(short.id))!.idempotency!.until;
      // Let the window close by the backend's own clock.
      while (Date.now() <= until + 5) await new Promise((resolve) => setTimeout(resolve, 10));
      const after = await workflow.start("plain", { n: 5 }, { idempotencyKey: "brief", idempotencyTTLMS: 20 });
      expect(after.created).toBe(true);
      expect(after.id).not.toBe(short.id);
    });

    it("idempotency keys race: 10 starts at once with one key make one run", async () => {
      const runs = await Promise.all(
        Array.from({ length: 10 }, (_, n) => workflow.start("plain", { n }, { idempotencyKey: "burst" })),
      );
      expect(new Set(runs.map((run) => run.id)).size).toBe(1);
      expect(runs.filter((run) => run.created)).toHaveLength(1);
    });

    it("refuses bad options and keys with invalid_input", async () => {
      expect(() =>
        workflow("badLimit", { start: async () => ({ done: true }) }, { concurrency: { limit: 0 } }),
      ).toThrow(/concurrency.limit must be an integer from 1 to 1000, got 0/);
      expect(() =>
        workflow("badPeriod", { start: async () => ({ done: true }) }, { debounce: { periodMS: -1 } }),
      ).toThrow(/debounce.periodMS must be a whole number of milliseconds/);
      await expect(workflow.start("perCustomer", { customer: 7 })).rejects.toMatchObject({
        code: "invalid_input",
        message: expect.stringMatching(/key of workflow "perCustomer" must be a string/),
      });
      await expect(workflow.start("plain", {}, { idempotencyKey: "" })).rejects.toMatchObject({
        code: "invalid_input",
      });
      await expect(workflow.start("plain", {}, { idempotencyKey: "k", idempotencyTTLMS: 0 })).rejects.toMatchObject({
        code: "invalid_input",
      });
    });
  });
}

async function viewsOf(runs: readonly { id: string }[]): Promise<WorkflowRunView[]> {
  return Promise.all(runs.map(async (run) => (await workflow.get(run.id))!));
}

async function untilEnded(runId: string): Promise<WorkflowRunView> {
  for (;;) {
    const view = await workflow.get(runId);
    if (view && view.status !== "running" && view.status !== "queued") return view;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function eventAt(view: WorkflowRunView, type: RunEventView["type"]): number {
  const event = view.events.find((e) => e.type === type);
  if (!event) throw new Error(`run ${view.id} has no ${type}`);
  return event.at;
}
