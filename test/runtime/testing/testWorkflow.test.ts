import { afterEach, describe, expect, expectTypeOf, it } from "vitest";
import { PlatformError } from "#src/core/errors.ts";
import { defineWorkflow, type WorkflowSteps } from "#src/engine/api/definition.ts";
import type { RunEventView } from "#src/engine/execution/describeRun.ts";
import { RetryAfterError } from "#src/engine/execution/retryAfterError.ts";
import { getWorkflowDefinition, resetWorkflowsForTests, workflow } from "#src/engine/api/workflowApi.ts";
import { type TestRun, testWorkflow } from "platform/testing";

const START = Date.UTC(2026, 0, 1);
const DAY = 86_400_000;

const at = (events: RunEventView[], type: RunEventView["type"], step?: string) =>
  events
    .filter((e) => e.type === type && (step === undefined || (e.payload as { step?: string }).step === step))
    .map((e) => e.at);

interface Case {
  name: string;
  steps: WorkflowSteps;
  /** What the test does once the run first stops. */
  act?: (run: TestRun) => Promise<unknown>;
  status: "completed" | "failed" | "cancelled";
  result?: unknown;
  /** Checks on the finished run's events (virtual times from START). */
  check?: (events: RunEventView[]) => void;
}

const cases: Case[] = [
  {
    name: "a sleep of a day completes at once, recorded with wake_at a day later",
    steps: {
      start: async () => ({ step: "nudge", sleepMS: DAY }),
      nudge: async () => ({ done: true, result: "nudged" }),
    },
    status: "completed",
    result: "nudged",
    check: (events) => {
      const completed = events.find((e) => e.type === "step_completed");
      expect(completed?.payload).toMatchObject({ next_step: "nudge", wake_at: START + DAY });
      expect(at(events, "step_started", "nudge")).toEqual([START + DAY]);
    },
  },
  {
    name: "a wait is satisfied by send: the next step runs with ctx.event",
    steps: {
      start: async () => ({ step: "approved", waitFor: "approval", timeoutMS: 3_600_000 }),
      approved: async (ctx) => ({ done: true, result: ctx.event }),
    },
    act: (run) => run.send("approval", { by: "ada" }),
    status: "completed",
    result: { name: "approval", payload: { by: "ada" } },
  },
  {
    name: "a wait times out: the next step runs with ctx.event null, timeoutMS later",
    steps: {
      start: async () => ({ step: "approved", waitFor: "approval", timeoutMS: 3_600_000 }),
      approved: async (ctx) => ({ done: true, result: ctx.event }),
    },
    act: (run) => run.timeOut(),
    status: "completed",
    result: null,
    check: (events) => expect(at(events, "step_started", "approved")).toEqual([START + 3_600_000]),
  },
  {
    name: "a cancelled waiting run is cancelled",
    steps: {
      start: async () => ({ step: "approved", waitFor: "approval" }),
      approved: async () => ({ done: true }),
    },
    act: (run) => run.cancel("no longer needed"),
    status: "cancelled",
    check: (events) => expect(events.at(-1)?.payload).toEqual({ reason: "no longer needed" }),
  },
  {
    name: "RetryAfterError waits are recorded: each next attempt starts retryAfterMS later",
    steps: {
      start: async (ctx) => {
        if (ctx.attempt < 3) throw new RetryAfterError("busy", 55_000);
        return { done: true, result: ctx.attempt };
      },
    },
    status: "completed",
    result: 3,
    check: (events) => expect(at(events, "step_started", "start")).toEqual([START, START + 55_000, START + 110_000]),
  },
];

describe("testWorkflow", () => {
  it.each(cases)("$name", async ({ steps, act, status, result, check }) => {
    const run = await testWorkflow(defineWorkflow("case", steps, { maxAttempts: 3 }), {}, { startAt: START });
    if (act) {
      expect(run.view.status).toBe("running");
      await act(run);
    }
    expect(run.view.status).toBe(status);
    if (status === "completed") await expect(run.result()).resolves.toEqual(result);
    if (status === "cancelled") await expect(run.result()).rejects.toMatchObject({ code: "cancelled" });
    check?.(run.view.events);
  });

  it("stops at a wait and answers what it waits for; an event sent to a finished run is refused", async () => {
    const run = await testWorkflow(
      defineWorkflow("approve", {
        start: async () => ({ step: "done", waitFor: "approval", timeoutMS: 60_000 }),
        done: async () => ({ done: true }),
      }),
      null,
      { startAt: START },
    );
    expect(run.view.waitingFor).toEqual({ name: "approval", timeoutAt: START + 60_000 });
    await expect(run.result()).rejects.toMatchObject({ code: "conflict" });
    await run.send("approval");
    await expect(run.send("approval")).rejects.toMatchObject({ code: "conflict" });
    await expect(run.timeOut()).rejects.toMatchObject({ code: "conflict" });
  });

  it("a failed run rejects with workflow_failed and its reason", async () => {
    const run = await testWorkflow(
      defineWorkflow(
        "fails",
        {
          start: async () => {
            throw new Error("card declined");
          },
        },
        { maxAttempts: 2 },
      ),
    );
    await expect(run.result()).rejects.toMatchObject({ code: "workflow_failed", message: "card declined" });
  });

  it("{ env } gives the steps the project's variables as ctx.env, never the platform's own bindings", async () => {
    const seen: Record<string, unknown>[] = [];
    const frozen: boolean[] = [];
    const definition = defineWorkflow("reads-env", {
      start: async (ctx) => {
        seen.push({ ...ctx.env });
        frozen.push(Object.isFrozen(ctx.env));
        return { done: true, result: ctx.env.API_KEY ?? null };
      },
    });
    const run = await testWorkflow(definition, null, { env: { API_KEY: "k-123", REGION: "eu" } });
    await expect(run.result()).resolves.toBe("k-123");
    expect(seen).toEqual([{ API_KEY: "k-123", REGION: "eu" }]);
    // Another run without them reads none: one test's variables are not another's.
    const bare = await testWorkflow(definition);
    await expect(bare.result()).resolves.toBeNull();
    expect(seen[1]).toEqual({});
    expect(frozen).toEqual([true, true]);
  });

  it("an unknown workflow name is refused with unknown_workflow", async () => {
    await expect(testWorkflow("no-such-workflow")).rejects.toBeInstanceOf(PlatformError);
    await expect(testWorkflow("no-such-workflow")).rejects.toMatchObject({ code: "unknown_workflow" });
  });
});

describe("testWorkflow by name (the example of docs/workflows.md)", () => {
  afterEach(() => resetWorkflowsForTests());

  it("reminds a day later, then waits for approval", async () => {
    workflow("remind", {
      start: async () => ({ step: "nudge", sleepMS: DAY }),
      nudge: async () => ({ step: "approved", waitFor: "approval", timeoutMS: 3_600_000 }),
      approved: async (ctx) => ({ done: true, result: ctx.event }),
    });
    const run = await testWorkflow("remind", { user: "ada" }, { startAt: START });
    expect(run.view.waitingFor).toEqual({ name: "approval", timeoutAt: run.now() + 3_600_000 });
    const nudged = run.view.events.find((e) => e.type === "step_started" && e.payload.step === "nudge");
    expect(nudged?.at).toBe(START + DAY);
    await run.send("approval", { by: "ada" });
    await expect(run.result()).resolves.toEqual({ name: "approval", payload: { by: "ada" } });
  });
});

describe("testWorkflow with child runs", () => {
  afterEach(() => resetWorkflowsForTests());

  function register() {
    workflow("square", {
      start: async (ctx) =>
        ctx.data.n === 2 ? { step: "late", sleepMS: DAY } : { done: true, result: ctx.data.n ** 2 },
      late: async () => ({ step: "approved", waitFor: "go" }),
      approved: async () => ({ done: true, result: 4 }),
    });
    workflow("fan", {
      start: async () => ({
        step: "collect",
        children: [0, 1, 2].map((n) => ({ workflow: "square", data: { n } })),
      }),
      collect: async (ctx) => ({ done: true, result: ctx.children }),
    });
  }

  it("drives the children on the same clock; the parent goes on once the last one ends", async () => {
    register();
    const parent = await testWorkflow("fan", null, { startAt: START });
    expect(parent.view).toMatchObject({ status: "waiting", waitingForChildren: { total: 3, finished: 2 } });
    await expect(parent.result()).rejects.toMatchObject({
      code: "conflict",
      message: /waiting for its children \(2 of 3/,
    });
    expect(parent.runs.map((child) => child.view.status)).toEqual(["completed", "completed", "running"]);
    const waiting = parent.runs[2] as TestRun;
    expect(waiting.view).toMatchObject({ parentRunId: parent.id, waitingFor: { name: "go" } });
    expect(waiting.now()).toBe(START + DAY);
    await waiting.send("go");
    await expect(parent.result()).resolves.toEqual([
      { runId: parent.runs[0]?.id, workflow: "square", status: "completed", result: 0 },
      { runId: parent.runs[1]?.id, workflow: "square", status: "completed", result: 1 },
      { runId: waiting.id, workflow: "square", status: "completed", result: 4 },
    ]);
    // The parent's next step ran when its last child ended, a day in.
    expect(parent.view.status).toBe("completed");
    expect(at(parent.view.events, "step_started", "collect")).toEqual([START + DAY]);
  });

  it("cancelling the parent cancels its waiting child", async () => {
    register();
    const parent = await testWorkflow("fan", null, { startAt: START });
    await parent.cancel("stop");
    expect(parent.runs.map((child) => child.view.status)).toEqual(["completed", "completed", "cancelled"]);
    expect(parent.runs[2]?.view.cancelReason).toBe(`Its parent run "${parent.id}" was cancelled`);
  });
});

describe("typed workflows: workflow<Data, Pad, Result>(…)", () => {
  afterEach(() => resetWorkflowsForTests());

  interface Order {
    item: string;
    quantity: number;
  }
  interface Pad {
    charged: { cents: number };
  }
  interface Receipt {
    item: string;
    cents: number;
  }

  it("types ctx.data, ctx.scratchpad and ctx.write in the steps, the start data and run.result()", async () => {
    const checkout = workflow<Order, Pad, Receipt>("typed-checkout", {
      start: async (ctx) => {
        expectTypeOf(ctx.data).toEqualTypeOf<Order>();
        ctx.write("charged", { cents: ctx.data.quantity * 250 });
        // @ts-expect-error: the scratchpad has no key "refunded"
        expect(() => ctx.write("refunded", true)).not.toThrow();
        return { step: "ship" };
      },
      ship: async (ctx) => {
        expectTypeOf(ctx.scratchpad.charged).toEqualTypeOf<{ cents: number } | undefined>();
        return { done: true, result: { item: ctx.data.item, cents: ctx.scratchpad.charged!.cents } };
      },
    });
    const run = await testWorkflow(checkout, { item: "tea", quantity: 2 });
    expectTypeOf(run).toEqualTypeOf<TestRun<Receipt>>();
    const receipt = await run.result();
    expectTypeOf(receipt).toEqualTypeOf<Receipt>();
    expect(receipt).toEqual({ item: "tea", cents: 500 });
    // @ts-expect-error: the start data must be an Order
    await expect(testWorkflow(checkout, { item: "tea" }).then((r) => r.result())).rejects.toMatchObject({
      code: "workflow_failed",
    });
  });

  it("a step returning a result of another type does not compile", () => {
    workflow<Order, Pad, Receipt>("typed-wrong", {
      // @ts-expect-error: the result must be a Receipt
      start: async () => ({ done: true, result: { item: 1 } }),
    });
    expect(getWorkflowDefinition("typed-wrong")?.steps).toHaveProperty("start");
  });

  it("untyped code compiles as before: data, scratchpad and result are any", async () => {
    const loose = workflow("loose", {
      start: async (ctx) => ({ done: true, result: ctx.data.anything ?? ctx.scratchpad.whatever ?? 1 }),
    });
    const run = await testWorkflow(loose, {});
    expectTypeOf(await run.result()).toBeAny();
    expect(await run.result()).toBe(1);
  });
});
