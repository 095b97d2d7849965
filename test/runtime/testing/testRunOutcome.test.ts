import { afterEach, describe, expect, it } from "vitest";
import { defineWorkflow } from "#src/engine/api/definition.ts";
import { resetWorkflowsForTests, workflow } from "#src/engine/api/workflowApi.ts";
import { testRequest, testWorkflow } from "platform/testing";

const START = Date.UTC(2026, 0, 1);
const HOUR = 3_600_000;
const RUN_ID = /^[0-9a-f]{64}\.[a-z0-9]{12}$/;

class CardDeclined extends Error {
  override name = "CardDeclined";
}

describe("a failed run's result() rejects with the step's error as cause", () => {
  it("cause carries the error's name, message and a stack naming this file", async () => {
    const run = await testWorkflow(
      defineWorkflow(
        "declines",
        {
          start: async () => {
            throw new CardDeclined("card 4242 declined");
          },
        },
        { maxAttempts: 1 },
      ),
    );
    const error = await run.result().then(
      () => null,
      (rejected: unknown) => rejected as Error & { code?: string; cause?: Error },
    );
    expect(error).toMatchObject({ code: "workflow_failed", message: "card 4242 declined" });
    expect(error?.cause).toBeInstanceOf(Error);
    expect(error?.cause).toMatchObject({ name: "CardDeclined", message: "card 4242 declined" });
    expect(error?.cause?.stack).toContain("testRunOutcome.test.ts:");
  });
});

describe("testWorkflow's idempotencyKey answers as workflow.start's", () => {
  const counted = defineWorkflow("keyed-charge", {
    start: async () => ({ step: "charged", waitFor: "receipt", timeoutMS: HOUR }),
    charged: async (ctx) => ({ done: true, result: ctx.event }),
  });

  const cases: { name: string; second: { key: string; startAt: number }; same: boolean }[] = [
    { name: "one key within its window: one run", second: { key: "order-1", startAt: START + 1 }, same: true },
    { name: "another key: another run", second: { key: "order-2", startAt: START + 1 }, same: false },
    {
      name: "one key after its window: a new run",
      second: { key: "order-1", startAt: START + 25 * HOUR },
      same: false,
    },
  ];

  it.each(cases)("$name", async ({ second, same }) => {
    const key = `${crypto.randomUUID()}-`;
    const first = await testWorkflow(counted, null, { idempotencyKey: `${key}order-1`, startAt: START });
    await first.send("receipt", { paid: true });
    const again = await testWorkflow(counted, null, {
      idempotencyKey: `${key}${second.key}`,
      startAt: second.startAt,
    });
    expect(again.id === first.id).toBe(same);
    if (same) expect(again).toBe(first);
    else expect(again.view.status).toBe("running");
  });

  it("refuses a bad key as workflow.start does", async () => {
    await expect(testWorkflow(counted, null, { idempotencyKey: "" })).rejects.toMatchObject({
      code: "invalid_input",
      message: expect.stringContaining("idempotencyKey"),
    });
    await expect(testWorkflow(counted, null, { idempotencyTTLMS: 5 })).rejects.toMatchObject({
      code: "invalid_input",
      message: expect.stringContaining("needs an idempotencyKey"),
    });
  });
});

describe("test-kit run ids look like the platform's", () => {
  afterEach(() => resetWorkflowsForTests());

  it("a run's id and its children's ids are <64 hex>.<12>", async () => {
    workflow("kit-child", { start: async () => ({ done: true, result: 1 }) });
    const parent = defineWorkflow("kit-parent", {
      start: async () => ({ step: "after", children: [{ workflow: "kit-child", data: null }] }),
      after: async (ctx) => ({ done: true, result: ctx.children?.map((child) => child.runId) ?? [] }),
    });
    const run = await testWorkflow(parent);
    expect(run.id).toMatch(RUN_ID);
    const childIds = (await run.result()) as string[];
    expect(childIds).toHaveLength(1);
    expect(childIds[0]).toMatch(RUN_ID);
    expect(run.runs.map((child) => child.id)).toEqual(childIds);
  });
});

describe("workflow.start's idempotencyKey in a request testRequest serves", () => {
  afterEach(() => resetWorkflowsForTests());

  it("two requests with one key answer one run; a request with another key starts another", async () => {
    workflow("keyed-order", {
      start: async () => ({ step: "done", waitFor: "paid" }),
      done: async () => ({ done: true }),
    });
    const key = crypto.randomUUID();
    const project = {
      fetch: async (request: Request) => {
        const suffix = new URL(request.url).searchParams.get("key") ?? "";
        const run = await workflow.start("keyed-order", {}, { idempotencyKey: `${key}${suffix}` });
        return Response.json({ runId: run.id, created: run.created });
      },
    };
    const started = async (path: string) =>
      (await (await testRequest(project, path)).json()) as { runId: string; created: boolean };
    const first = await started("/start");
    const second = await started("/start");
    const other = await started("/start?key=b");
    expect(first).toMatchObject({ created: true, runId: expect.stringMatching(RUN_ID) });
    expect(second).toEqual({ runId: first.runId, created: false });
    expect(other.runId).not.toBe(first.runId);
  });
});

describe("the test kit runs rollbacks on its virtual clock", () => {
  it("a rollback retried an hour later still ends the run at once, with rolledBack and the handlers' context", async () => {
    const refunds: unknown[] = [];
    const refunding = defineWorkflow(
      "refunds",
      {
        start: async (ctx) => {
          ctx.write("charge", "ch_1");
          return { step: "ship" };
        },
        ship: async () => {
          throw new CardDeclined("no stock");
        },
      },
      {
        nonRetryableErrors: ["CardDeclined"],
        rollback: {
          start: async (ctx) => {
            if (ctx.attempt === 1) throw new Error("refund service busy");
            refunds.push({ output: ctx.output, reason: ctx.failure.reason });
          },
        },
        rollbackOptions: { backoff: { initialMS: HOUR, maxMS: HOUR, jitter: 0 } },
      },
    );
    const run = await testWorkflow(refunding, null, { startAt: START });
    await expect(run.result()).rejects.toMatchObject({ message: "no stock" });
    expect(run.view.rolledBack).toEqual(["start"]);
    expect(refunds).toEqual([{ output: { charge: "ch_1" }, reason: "no stock" }]);
    const retried = run.view.events.find((e) => e.type === "rollback_started" && e.payload.attempt === 2);
    expect(retried?.at).toBe(START + HOUR);
  });
});
