import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PlatformError } from "../../src/core/errors.ts";
import type { WorkflowDefinition } from "../../src/engine/definition.ts";
import { NonRetryableError } from "../../src/engine/nonRetryableError.ts";
import {
  getWorkflowDefinition,
  installWorkflowBackend,
  resetWorkflowsForTests,
  workflow,
  type WorkflowBackend,
} from "../../src/engine/workflowApi.ts";

/**
 * One behaviour, every backend: the same cases run against the in-memory
 * backend and the node:sqlite backend here, and against the Durable Object
 * backend inside workerd. Everything goes through the public `workflow` API.
 * No Node or Cloudflare imports: only vitest and the engine core.
 */
export interface WorkflowBackendUnderTest {
  backend: WorkflowBackend;
  close(): void | Promise<void>;
}

export type MakeWorkflowBackend = (
  definitions: (name: string) => WorkflowDefinition | undefined,
) => WorkflowBackendUnderTest | Promise<WorkflowBackendUnderTest>;

/** Spec payload fields per event type: nothing more may appear in `workflow.get(...).events`. */
const PAYLOAD_FIELDS: Record<string, string[]> = {
  workflow_created: ["workflowName", "writes"],
  step_started: ["attempt", "step"],
  step_completed: ["next_step", "step", "writes"],
  step_failed: ["attempt", "reason", "retryable", "step"],
  workflow_completed: ["result"],
  workflow_failed: ["cause", "reason"],
};

function shape(events: readonly { type: string; payload: object }[]): string[] {
  return events.map(({ type, payload }) => {
    const p = payload as Record<string, unknown>;
    if (type === "step_started") return `step_started(${p.step},${p.attempt})`;
    if (type === "step_failed") return `step_failed(${p.step},${p.attempt},${p.retryable ? "retryable" : "final"})`;
    if (type === "step_completed")
      return p.next_step === undefined ? `step_completed(${p.step})` : `step_completed(${p.step}->${p.next_step})`;
    return type;
  });
}

async function rejection(promise: Promise<unknown>): Promise<PlatformError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof PlatformError) return error;
    throw error;
  }
  throw new Error("expected a rejection");
}

export function describeWorkflowConformance(name: string, makeBackend: MakeWorkflowBackend): void {
  describe(`workflow conformance: ${name}`, () => {
    let subject: WorkflowBackendUnderTest;
    // Steps of the "gated" workflow wait until the test opens their gate (keyed by workflow id). They
    // poll a flag on their own timers rather than await a promise the test resolves: in workerd a step
    // resumed by the test's promise would continue in the test's context, not its actor's.
    const opened = new Set<string>();
    const gateFor = (id: string) => ({
      open: () => void opened.add(id),
      wait: async () => {
        while (!opened.has(id) && !opened.has("*")) await new Promise((resolve) => setTimeout(resolve, 2));
      },
    });

    beforeEach(async () => {
      resetWorkflowsForTests();
      opened.clear();
      workflow(
        "greet",
        {
          start: async (ctx) => {
            ctx.write("n", 1);
            return { step: "finish" };
          },
          finish: async (ctx) => ({ done: true, result: { hello: ctx.data.name, n: ctx.scratchpad.n } }),
        },
        { maxAttempts: 3, backoff: { initialMS: 100, maxMS: 10_000, factor: 2 }, stepTimeoutMS: 30_000 },
      );
      workflow(
        "flaky",
        {
          start: async (ctx) => {
            if (ctx.attempt === 1) throw new Error("flaky");
            return { done: true, result: { attempt: ctx.attempt } };
          },
        },
        { backoff: { initialMS: 5, jitter: 0 } },
      );
      workflow("fatal", {
        start: async () => {
          throw new NonRetryableError("card declined");
        },
      });
      workflow(
        "exhaust",
        {
          start: async (ctx) => {
            throw new Error(`down ${ctx.attempt}`);
          },
        },
        { maxAttempts: 2, backoff: { initialMS: 5, jitter: 0 } },
      );
      workflow(
        "slow",
        {
          // Attempt 1 never settles; attempt 2 answers at once.
          start: (ctx) => (ctx.attempt === 1 ? new Promise<never>(() => {}) : { done: true, result: "after timeout" }),
        },
        { stepTimeoutMS: 30, maxAttempts: 2, backoff: { initialMS: 1, jitter: 0 } },
      );
      workflow(
        "gated",
        {
          start: async (ctx) => {
            await gateFor(ctx.workflowId).wait();
            return { done: true, result: ctx.data };
          },
        },
        { stepTimeoutMS: 10_000 },
      );
      subject = await makeBackend(getWorkflowDefinition);
      installWorkflowBackend(subject.backend);
    });

    afterEach(async () => {
      opened.add("*");
      await subject.close();
      resetWorkflowsForTests();
    });

    it("runs start → finish with the scratchpad and resolves result()", async () => {
      const run = await workflow.start("greet", { name: "Ada" });
      expect(run.created).toBe(true);
      expect(run.workflowId).toBe(run.id);
      await expect(run.result()).resolves.toEqual({ hello: "Ada", n: 1 });
      const view = await workflow.get(run.id);
      expect(shape(view?.events ?? [])).toEqual([
        "workflow_created",
        "step_started(start,1)",
        "step_completed(start->finish)",
        "step_started(finish,1)",
        "step_completed(finish)",
        "workflow_completed",
      ]);
      expect(view?.events[0]?.payload).toEqual({ workflowName: "greet", writes: { data: { name: "Ada" } } });
      expect(view?.events[2]?.payload).toEqual({ step: "start", writes: { n: 1 }, next_step: "finish" });
    });

    it("retries a plain error and succeeds on attempt 2", async () => {
      const run = await workflow.start("flaky");
      await expect(run.result()).resolves.toEqual({ attempt: 2 });
      const view = await workflow.get(run.id);
      expect(shape(view?.events ?? [])).toEqual([
        "workflow_created",
        "step_started(start,1)",
        "step_failed(start,1,retryable)",
        "step_started(start,2)",
        "step_completed(start)",
        "workflow_completed",
      ]);
      expect(view?.events[2]?.payload).toEqual({ step: "start", attempt: 1, reason: "flaky", retryable: true });
      // The retry waited for its backoff.
      const failedAt = view?.events[2]?.at ?? 0;
      expect((view?.events[3]?.at ?? 0) - failedAt).toBeGreaterThanOrEqual(5);
    });

    it("fails at once on NonRetryableError; result() rejects with the reason", async () => {
      const run = await workflow.start("fatal");
      const error = await rejection(run.result());
      expect(error.code).toBe("workflow_failed");
      expect(error.message).toBe("card declined");
      const view = await workflow.get(run.id);
      expect(view).toMatchObject({ status: "failed", error: "card declined" });
      expect(shape(view?.events ?? [])).toEqual([
        "workflow_created",
        "step_started(start,1)",
        "step_failed(start,1,final)",
        "workflow_failed",
      ]);
      expect(view?.events[3]?.payload).toEqual({ reason: "card declined", cause: "non_retryable" });
    });

    it("fails after maxAttempts with attempts_exhausted", async () => {
      const run = await workflow.start("exhaust");
      expect((await rejection(run.result())).message).toBe("down 2");
      const view = await workflow.get(run.id);
      expect(shape(view?.events ?? [])).toEqual([
        "workflow_created",
        "step_started(start,1)",
        "step_failed(start,1,retryable)",
        "step_started(start,2)",
        "step_failed(start,2,final)",
        "workflow_failed",
      ]);
      expect(view?.events[5]?.payload).toEqual({ reason: "down 2", cause: "attempts_exhausted" });
    });

    it("records a step timeout as step_failed with reason timeout and retries", async () => {
      const run = await workflow.start("slow");
      await expect(run.result()).resolves.toBe("after timeout");
      const view = await workflow.get(run.id);
      expect(shape(view?.events ?? [])).toEqual([
        "workflow_created",
        "step_started(start,1)",
        "step_failed(start,1,retryable)",
        "step_started(start,2)",
        "step_completed(start)",
        "workflow_completed",
      ]);
      expect(view?.events[2]?.payload).toEqual({ step: "start", attempt: 1, reason: "timeout", retryable: true });
    });

    it("returns the active run with created: false for a taken id, and a new run once it finished", async () => {
      const first = await workflow.start("gated", { n: 1 }, { id: "order-42" });
      const again = await workflow.start("gated", { n: 2 }, { id: "order-42" });
      expect(first).toMatchObject({ workflowId: "order-42", created: true });
      expect(again).toMatchObject({ id: first.id, workflowId: "order-42", created: false });
      gateFor("order-42").open();
      await expect(again.result()).resolves.toEqual({ n: 1 });
      const later = await workflow.start("gated", { n: 3 }, { id: "order-42" });
      expect(later.created).toBe(true);
      expect(later.id).not.toBe(first.id);
      await expect(later.result()).resolves.toEqual({ n: 3 });
    });

    it("gets a run from its id alone, in the contract's shape with exactly the spec's payload fields", async () => {
      const run = await workflow.start("greet", { name: "Ada" }, { id: "greet-1" });
      await run.result();
      const view = await workflow.get(run.id);
      expect(view).toEqual({
        id: run.id,
        workflowId: "greet-1",
        name: "greet",
        status: "completed",
        result: { hello: "Ada", n: 1 },
        createdAt: expect.any(Number),
        updatedAt: expect.any(Number),
        events: expect.any(Array),
      });
      expect(view?.updatedAt).toBeGreaterThanOrEqual(view?.createdAt ?? Infinity);
      view?.events.forEach((event, i) => {
        expect(Object.keys(event).sort()).toEqual(["at", "payload", "seq", "type"]);
        expect(event.seq).toBe(i + 1);
        for (const key of Object.keys(event.payload)) expect(PAYLOAD_FIELDS[event.type]).toContain(key);
      });
      expect(await workflow.get("no-such-run")).toBeNull();
    });

    it("lists newest first with name and status filters, cursor and limit", async () => {
      const done1 = await workflow.start("greet", { name: "a" });
      await done1.result();
      const done2 = await workflow.start("greet", { name: "b" });
      await done2.result();
      const open1 = await workflow.start("gated", null, { id: "g1" });
      const open2 = await workflow.start("gated", null, { id: "g2" });

      const ids = (page: { runs: { id: string }[] }) => page.runs.map((r) => r.id);
      expect(ids(await workflow.list({ name: "greet" }))).toEqual([done2.id, done1.id]);
      expect(ids(await workflow.list({ status: "running" }))).toEqual([open2.id, open1.id]);
      expect(ids(await workflow.list({ name: "gated", status: "completed" }))).toEqual([]);
      const page1 = await workflow.list({ limit: 3 });
      expect(ids(page1)).toEqual([open2.id, open1.id, done2.id]);
      expect(page1.cursor).toEqual(expect.any(String));
      const page2 = await workflow.list({ limit: 3, cursor: page1.cursor });
      expect(ids(page2)).toEqual([done1.id]);
      expect(page2.cursor).toBeUndefined();
      expect(page1.runs[2]).toEqual({
        id: done2.id,
        workflowId: done2.id,
        name: "greet",
        status: "completed",
        createdAt: expect.any(Number),
        updatedAt: expect.any(Number),
      });
    });

    it("refuses an unknown workflow and unstorable data with typed errors, creating nothing", async () => {
      expect((await rejection(workflow.start("nope", {}))).code).toBe("unknown_workflow");
      expect((await rejection(workflow.start("greet", { when: new Date() }))).code).toBe("invalid_input");
      expect((await rejection(workflow.start("greet", { big: 1n }))).code).toBe("invalid_input");
      expect((await rejection(workflow.start("greet", "x".repeat(1024 * 1024)))).code).toBe("payload_too_large");
      expect((await workflow.list()).runs).toEqual([]);
    });
  });
}
