/**
 * The spec's workflow behaviour, every backend: start → finish, retries, failures, timeouts, one
 * active run per id, get and list, refusals. Everything goes through the public `workflow` API.
 */
import { describe, expect, it } from "vitest";
import { NonRetryableError } from "#src/engine/execution/nonRetryableError.ts";
import { workflow } from "#src/engine/api/workflowApi.ts";
import {
  EXHAUSTED_AFTER_TWO_LOG,
  FAILED_AT_ONCE_LOG,
  RETRIED_ONCE_LOG,
  rejection,
  shape,
  START_FINISH_LOG,
  completedGreetSummary,
} from "#test/support/workflow/index.ts";
import {
  type MakeWorkflowBackend,
  PAYLOAD_FIELDS,
  pollingGates,
  useBackendUnderTest,
} from "./workflowConformance.fixture.ts";

export function describeCoreConformance(name: string, makeBackend: MakeWorkflowBackend): void {
  describe(`workflow conformance: ${name}`, () => {
    const gates = pollingGates();
    useBackendUnderTest(makeBackend, gates, () => {
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
            await gates.wait(ctx.workflowId);
            return { done: true, result: ctx.data };
          },
        },
        { stepTimeoutMS: 10_000 },
      );
    });

    it("runs start → finish with the scratchpad and resolves result()", async () => {
      const run = await workflow.start("greet", { name: "Ada" });
      expect(run.created).toBe(true);
      expect(run.workflowId).toBe(run.id);
      await expect(run.result()).resolves.toEqual({ hello: "Ada", n: 1 });
      const view = await workflow.get(run.id);
      expect(shape(view?.events ?? [])).toEqual(START_FINISH_LOG);
      expect(view?.events[0]?.payload).toEqual({ workflowName: "greet", writes: { data: { name: "Ada" } } });
      expect(view?.events[2]?.payload).toEqual({ step: "start", writes: { n: 1 }, next_step: "finish" });
    });

    it("retries a plain error and succeeds on attempt 2", async () => {
      const run = await workflow.start("flaky");
      await expect(run.result()).resolves.toEqual({ attempt: 2 });
      const view = await workflow.get(run.id);
      expect(shape(view?.events ?? [])).toEqual(RETRIED_ONCE_LOG);
      // Beyond the spec: the error itself, with its raw stack, beside the spec's reason.
      expect(view?.events[2]?.payload).toEqual({
        step: "start",
        attempt: 1,
        reason: "flaky",
        retryable: true,
        error: { name: "Error", message: "flaky", stack: expect.stringMatching(/^Error: flaky\n\s+at /) },
      });
      // The retry waited for its backoff.
      const failedAt = view?.events[2]?.at ?? 0;
      expect((view?.events[3]?.at ?? 0) - failedAt).toBeGreaterThanOrEqual(5);
    });

    it("fails at once on NonRetryableError; result() rejects with the reason", async () => {
      const run = await workflow.start("fatal");
      const error = await rejection(run.result());
      expect(error.code).toBe("workflow_failed");
      expect(error.message).toBe("card declined");
      // Beyond the spec: its cause is the step's error as it was thrown, stack included.
      expect(error.cause).toBeInstanceOf(Error);
      expect(error.cause).toMatchObject({ name: "NonRetryableError", message: "card declined" });
      expect((error.cause as Error).stack).toMatch(/^NonRetryableError: card declined\n\s+at /);
      const view = await workflow.get(run.id);
      expect(view).toMatchObject({ status: "failed", error: "card declined" });
      expect(view?.events[2]?.payload).toMatchObject({
        reason: "card declined",
        retryable: false,
        error: { name: "NonRetryableError", message: "card declined" },
      });
      expect(shape(view?.events ?? [])).toEqual(FAILED_AT_ONCE_LOG);
      expect(view?.events[3]?.payload).toEqual({ reason: "card declined", cause: "non_retryable" });
    });

    it("fails after maxAttempts with attempts_exhausted", async () => {
      const run = await workflow.start("exhaust");
      expect((await rejection(run.result())).message).toBe("down 2");
      const view = await workflow.get(run.id);
      expect(shape(view?.events ?? [])).toEqual(EXHAUSTED_AFTER_TWO_LOG);
      expect(view?.events[5]?.payload).toEqual({ reason: "down 2", cause: "attempts_exhausted" });
    });

    it("records a step timeout as step_failed with reason timeout and retries", async () => {
      const run = await workflow.start("slow");
      await expect(run.result()).resolves.toBe("after timeout");
      const view = await workflow.get(run.id);
      expect(shape(view?.events ?? [])).toEqual(RETRIED_ONCE_LOG);
      expect(view?.events[2]?.payload).toEqual({ step: "start", attempt: 1, reason: "timeout", retryable: true });
    });

    it("returns the active run with created: false for a taken id, and a new run once it finished", async () => {
      const first = await workflow.start("gated", { n: 1 }, { id: "order-42" });
      const again = await workflow.start("gated", { n: 2 }, { id: "order-42" });
      expect(first).toMatchObject({ workflowId: "order-42", created: true });
      expect(again).toMatchObject({ id: first.id, workflowId: "order-42", created: false });
      gates.open("order-42");
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
        step: "finish",
        result: { hello: "Ada", n: 1 },
        createdAt: expect.any(Number),
        updatedAt: expect.any(Number),
        events: expect.any(Array),
      });
      expect(view?.updatedAt).toBeGreaterThanOrEqual(view?.createdAt ?? Infinity);
      view?.events.forEach((event, i) => {
        // Beyond the spec: a step_completed carries its decoded continuation beside the payload.
        const keys =
          event.type === "step_completed"
            ? ["at", "continuation", "payload", "seq", "type"]
            : ["at", "payload", "seq", "type"];
        expect(Object.keys(event).sort()).toEqual(keys);
        expect(event.seq).toBe(i + 1);
        for (const key of Object.keys(event.payload)) expect(PAYLOAD_FIELDS[event.type]).toContain(key);
      });
      expect(
        view?.events.filter((event) => event.type === "step_completed").map((event) => event.continuation),
      ).toEqual([{ kind: "next_step", step: "finish" }, { kind: "done" }]);
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
      expect(page1.runs[2]).toEqual(completedGreetSummary(done2.id));
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
