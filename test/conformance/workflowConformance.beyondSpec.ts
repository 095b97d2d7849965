/**
 * Beyond the spec, every backend: durable sleep, waiting for an event, cancel, retry-after and
 * fast crash recovery, with the races between them and a host restart in the middle of each.
 */
import { describe, expect, it, vi } from "vitest";
import { PlatformError } from "#src/core/errors.ts";
import { RetryAfterError } from "#src/engine/execution/retryAfterError.ts";
import { workflow } from "#src/engine/api/workflowApi.ts";
import { EXHAUSTED_AFTER_TWO_LOG, RETRIED_ONCE_LOG, rejection, shape } from "#test/support/workflow/index.ts";
import {
  eventOf,
  lastType,
  type MakeWorkflowBackend,
  pause,
  pollingGates,
  resultAfterRestart,
  type RunEvent,
  useBackendUnderTest,
  viewOf,
  viewWhen,
} from "./workflowConformance.fixture.ts";

export function describeBeyondSpecConformance(name: string, makeBackend: MakeWorkflowBackend): void {
  describe(`workflow conformance, beyond the spec: ${name}`, () => {
    const gates = pollingGates();
    /** Workflow ids whose gated step has returned (its outcome may then be committed or dropped). */
    const returned = new Set<string>();
    const { restart } = useBackendUnderTest(makeBackend, gates, () => {
      returned.clear();
      workflow("sleeper", {
        start: async (ctx) => ({ step: "woke", sleepMS: ctx.data?.sleepMS ?? 150 }),
        woke: async () => ({ done: true, result: "woke" }),
      });
      workflow("sleep-until", {
        start: async (ctx) => ({ step: "woke", until: ctx.data.until }),
        woke: async () => ({ done: true, result: "woke" }),
      });
      workflow("too-long", { start: async () => ({ step: "start", sleepMS: 366 * 86_400_000 }) });
      workflow(
        "approval",
        {
          start: async (ctx) => ({
            step: "approved",
            waitFor: "approval",
            ...(ctx.data?.timeoutMS === undefined ? {} : { timeoutMS: ctx.data.timeoutMS }),
          }),
          approved: async (ctx) => ({ done: true, result: ctx.event }),
        },
        { stepTimeoutMS: 10_000 },
      );
      workflow("inbox", {
        start: async (ctx) => {
          await gates.wait(ctx.workflowId);
          return { step: "first", waitFor: "a" };
        },
        first: async (ctx) => {
          ctx.write("first", ctx.event);
          return { step: "second", waitFor: "b", timeoutMS: 60_000 };
        },
        second: async (ctx) => ({ done: true, result: { first: ctx.scratchpad.first, second: ctx.event } }),
      });
      workflow("twice", {
        start: async () => ({ step: "first", waitFor: "a" }),
        first: async (ctx) => {
          ctx.write("first", ctx.event);
          return { step: "second", waitFor: "a" };
        },
        second: async (ctx) => ({ done: true, result: [ctx.scratchpad.first, ctx.event] }),
      });
      workflow(
        "cancellable",
        {
          start: async (ctx) => {
            await gates.wait(ctx.workflowId);
            ctx.write("late", true);
            returned.add(ctx.workflowId);
            return { step: "next" };
          },
          next: async () => ({ done: true }),
        },
        { stepTimeoutMS: 10_000 },
      );
      workflow(
        "retry-after",
        {
          start: async (ctx) => {
            if (ctx.attempt === 1) {
              throw ctx.data?.kind === "rate_limited"
                ? new PlatformError("rate_limited", "slow down", { retryAfterSeconds: (ctx.data.ms ?? 100) / 1000 })
                : new RetryAfterError("busy", ctx.data?.ms ?? 100);
            }
            return { done: true, result: ctx.attempt };
          },
        },
        // The backoff alone would wait a minute: only the asked-for delay lets the test finish.
        { backoff: { initialMS: 60_000, maxMS: 60_000, jitter: 0 } },
      );
      workflow(
        "always-busy",
        {
          start: async () => {
            throw new RetryAfterError("busy", 5);
          },
        },
        { maxAttempts: 2, backoff: { initialMS: 60_000, maxMS: 60_000 } },
      );
      workflow(
        "crashy",
        {
          // Attempt 1 hangs until the host dies under it; attempt 2 answers at once.
          start: async (ctx) => {
            if (ctx.attempt === 1) await gates.wait(ctx.workflowId);
            return { done: true, result: ctx.attempt };
          },
        },
        // A timeout of a minute: only `interrupted` lets the test finish in time.
        { stepTimeoutMS: 60_000, backoff: { initialMS: 1, jitter: 0 } },
      );
    });

    describe("durable sleep", () => {
      it("sleepMS: step_completed records wake_at and the next step is not claimed before it", async () => {
        const run = await workflow.start("sleeper", { sleepMS: 60 });
        await expect(run.result()).resolves.toBe("woke");
        const view = await viewOf(run.id);
        expect(shape(view.events)).toEqual([
          "workflow_created",
          "step_started(start,1)",
          "step_completed(start->woke)",
          "step_started(woke,1)",
          "step_completed(woke)",
          "workflow_completed",
        ]);
        const completed = eventOf(view, "step_completed", "start");
        expect(completed.payload.wake_at).toBe(completed.at + 60);
        expect(eventOf(view, "step_started", "woke").at).toBeGreaterThanOrEqual(completed.payload.wake_at as number);
        expect(view.wakeAt).toBeUndefined();
      });

      it("until: wakes at the given time; a run view shows wakeAt while it sleeps", async () => {
        const until = Date.now() + 80;
        const run = await workflow.start("sleep-until", { until });
        const sleeping = await viewWhen(run.id, (v) => v.wakeAt !== undefined);
        expect(sleeping).toMatchObject({ status: "running", wakeAt: until });
        await expect(run.result()).resolves.toBe("woke");
        const view = await viewOf(run.id);
        expect(eventOf(view, "step_completed", "start").payload.wake_at).toBe(until);
        expect(eventOf(view, "step_started", "woke").at).toBeGreaterThanOrEqual(until);
      });

      it("a sleep over a year fails the run without retry (invalid_input)", async () => {
        const run = await workflow.start("too-long");
        const error = await rejection(run.result());
        expect(error.code).toBe("workflow_failed");
        expect(error.message).toMatch(/at most .*a year/);
        expect(shape((await viewOf(run.id)).events).slice(-2)).toEqual([
          "step_failed(start,1,final)",
          "workflow_failed",
        ]);
      });

      it("a restart during the sleep neither skips nor forgets it", async () => {
        const run = await workflow.start("sleeper", { sleepMS: 300 });
        const sleeping = await viewWhen(run.id, (v) => v.wakeAt !== undefined);
        await restart();
        expect(await resultAfterRestart(run.id)).toBe("woke");
        const view = await viewOf(run.id);
        expect(eventOf(view, "step_started", "woke").at).toBeGreaterThanOrEqual(sleeping.wakeAt as number);
        expect(shape(view.events).filter((e) => e.startsWith("step_started"))).toEqual([
          "step_started(start,1)",
          "step_started(woke,1)",
        ]);
      });
    });

    describe("waiting for an event", () => {
      it("the next step runs with ctx.event once the event is sent; the view shows waitingFor meanwhile", async () => {
        const run = await workflow.start("approval");
        const waiting = await viewWhen(run.id, (v) => v.waitingFor !== undefined);
        expect(waiting.waitingFor).toEqual({ name: "approval" });
        expect(eventOf(waiting, "step_completed", "start").payload).toEqual({
          step: "start",
          writes: {},
          next_step: "approved",
          waiting_for: "approval",
        });
        await workflow.send(run.id, "approval", { by: "ada" });
        await expect(run.result()).resolves.toEqual({ name: "approval", payload: { by: "ada" } });
        const view = await viewOf(run.id);
        const received = eventOf(view, "event_received");
        expect(received.payload).toEqual({ name: "approval", payload: { by: "ada" } });
        expect(eventOf(view, "step_started", "approved").payload).toEqual({
          step: "approved",
          attempt: 1,
          event_seq: received.seq,
        });
      });

      it("on timeout the next step runs with ctx.event = null, not before timeout_at", async () => {
        const run = await workflow.start("approval", { timeoutMS: 60 });
        await expect(run.result()).resolves.toBeNull();
        const view = await viewOf(run.id);
        const completed = eventOf(view, "step_completed", "start");
        expect(completed.payload.timeout_at).toBe(completed.at + 60);
        const started = eventOf(view, "step_started", "approved");
        expect(started.at).toBeGreaterThanOrEqual(completed.payload.timeout_at as number);
        expect(started.payload.event_seq).toBeUndefined();
      });

      it("keeps events sent before the wait (even during a step) and delivers them by arrival; others stay queued", async () => {
        const run = await workflow.start("inbox", null, { id: "inbox-1" });
        await viewWhen(run.id, (v) => lastType(v) === "step_started");
        await workflow.send(run.id, "b", 1);
        await workflow.send(run.id, "a", 2);
        await workflow.send(run.id, "a", 3);
        gates.open("inbox-1");
        await expect(run.result()).resolves.toEqual({
          first: { name: "a", payload: 2 },
          second: { name: "b", payload: 1 },
        });
        const view = await viewOf(run.id);
        // The step in flight committed after the events that arrived meanwhile; nothing was lost.
        expect(shape(view.events).slice(0, 6)).toEqual([
          "workflow_created",
          "step_started(start,1)",
          "event_received(b)",
          "event_received(a)",
          "event_received(a)",
          "step_completed(start->first)",
        ]);
        expect(view.events.filter((e) => e.type === "step_started").map((e) => e.payload)).toEqual([
          { step: "start", attempt: 1 },
          { step: "first", attempt: 1, event_seq: 4 },
          { step: "second", attempt: 1, event_seq: 3 },
        ]);
      });

      it("two sends at once: both are kept, delivered in the order the log took them", async () => {
        const run = await workflow.start("twice");
        await viewWhen(run.id, (v) => v.waitingFor !== undefined);
        await Promise.all([workflow.send(run.id, "a", 1), workflow.send(run.id, "a", 2)]);
        const result = await run.result();
        const view = await viewOf(run.id);
        const received = view.events.filter((e) => e.type === "event_received").map((e) => e.payload);
        expect(received.map((p) => (p as { payload: number }).payload).sort()).toEqual([1, 2]);
        expect(result).toEqual(received);
      });

      it("send vs timeout: whichever the log holds first wins, and the step's ctx.event says which", async () => {
        const run = await workflow.start("approval", { timeoutMS: 40 });
        await viewWhen(run.id, (v) => v.waitingFor !== undefined);
        await pause(40);
        const sent = await workflow.send(run.id, "approval", "late?").then(
          () => true,
          (error: PlatformError) => {
            expect(error.code).toBe("conflict");
            return false;
          },
        );
        const result = await run.result();
        const view = await viewOf(run.id);
        const started = eventOf(view, "step_started", "approved");
        const timeoutAt = eventOf(view, "step_completed", "start").payload.timeout_at as number;
        if (started.payload.event_seq === undefined) {
          expect(result).toBeNull();
          expect(started.at).toBeGreaterThanOrEqual(timeoutAt);
        } else {
          const received = view.events[started.payload.event_seq - 1] as RunEvent;
          expect(received).toMatchObject({ type: "event_received", payload: { name: "approval", payload: "late?" } });
          expect(received.at).toBeLessThanOrEqual(timeoutAt);
          expect(result).toEqual({ name: "approval", payload: "late?" });
        }
        if (!sent) expect(view.events.some((e) => e.type === "event_received")).toBe(false);
      });

      it("a restart while waiting: a later send still wakes the run", async () => {
        const run = await workflow.start("approval");
        await viewWhen(run.id, (v) => v.waitingFor !== undefined);
        await restart();
        await workflow.send(run.id, "approval", "after restart");
        expect(await resultAfterRestart(run.id)).toEqual({ name: "approval", payload: "after restart" });
      });

      it("a restart while waiting with a timeout: the timeout still fires, not before timeout_at", async () => {
        const run = await workflow.start("approval", { timeoutMS: 250 });
        const waiting = await viewWhen(run.id, (v) => v.waitingFor !== undefined);
        await restart();
        expect(await resultAfterRestart(run.id)).toBeNull();
        const view = await viewOf(run.id);
        expect(eventOf(view, "step_started", "approved").at).toBeGreaterThanOrEqual(
          waiting.waitingFor?.timeoutAt as number,
        );
      });

      it("refuses a bad event, an unknown run and a finished run with typed errors", async () => {
        const run = await workflow.start("approval");
        await viewWhen(run.id, (v) => v.waitingFor !== undefined);
        expect((await rejection(workflow.send(run.id, "", 1))).code).toBe("invalid_input");
        expect((await rejection(workflow.send(run.id, "approval", { when: new Date() }))).code).toBe("invalid_input");
        expect((await rejection(workflow.send(run.id, "approval", "x".repeat(1024 * 1024)))).code).toBe(
          "payload_too_large",
        );
        expect((await rejection(workflow.send("no-such-run", "approval", 1))).code).toBe("not_found");
        await workflow.send(run.id, "approval", "ok");
        await run.result();
        expect((await rejection(workflow.send(run.id, "approval", 1))).code).toBe("conflict");
        expect((await viewOf(run.id)).events.filter((e) => e.type === "event_received")).toHaveLength(1);
      });
    });

    describe("cancel", () => {
      it("cancels a sleeping run: status cancelled, result() rejects with cancelled, listed as cancelled, never wakes", async () => {
        const run = await workflow.start("sleeper", { sleepMS: 100 });
        await viewWhen(run.id, (v) => v.wakeAt !== undefined);
        const cancelled = await workflow.cancel(run.id, "no longer needed");
        expect(cancelled).toMatchObject({ id: run.id, status: "cancelled" });
        expect(cancelled.events.at(-1)).toMatchObject({
          type: "workflow_cancelled",
          payload: { reason: "no longer needed" },
        });
        const error = await rejection(run.result());
        expect(error.code).toBe("cancelled");
        expect((await workflow.list({ status: "cancelled" })).runs.map((r) => r.id)).toEqual([run.id]);
        expect((await workflow.list({ status: "running" })).runs).toEqual([]);
        await pause(150);
        expect(shape((await viewOf(run.id)).events).slice(-2)).toEqual([
          "step_completed(start->woke)",
          "workflow_cancelled",
        ]);
      });

      it("cancel vs step commit: the step in flight finishes but its result is dropped", async () => {
        const run = await workflow.start("cancellable", null, { id: "cancel-1" });
        await viewWhen(run.id, (v) => lastType(v) === "step_started");
        await workflow.cancel(run.id);
        gates.open("cancel-1");
        await vi.waitFor(() => expect(returned.has("cancel-1")).toBe(true), { timeout: 5000, interval: 5 });
        await pause(20);
        const view = await viewOf(run.id);
        expect(shape(view.events)).toEqual(["workflow_created", "step_started(start,1)", "workflow_cancelled"]);
        expect(view.status).toBe("cancelled");
        expect((await rejection(run.result())).code).toBe("cancelled");
      });

      it("refuses an unknown run and a finished one; a restart does not revive a cancelled run", async () => {
        expect((await rejection(workflow.cancel("no-such-run"))).code).toBe("not_found");
        const run = await workflow.start("approval");
        await viewWhen(run.id, (v) => v.waitingFor !== undefined);
        await workflow.cancel(run.id, "stop");
        expect((await rejection(workflow.cancel(run.id))).code).toBe("conflict");
        expect((await rejection(workflow.send(run.id, "approval", 1))).code).toBe("conflict");
        await restart();
        expect(await workflow.get(run.id)).toMatchObject({ status: "cancelled" });
        expect(lastType(await viewOf(run.id))).toBe("workflow_cancelled");
      });
    });

    describe("retry-after", () => {
      for (const kind of ["RetryAfterError", "rate_limited"] as const) {
        it(`${kind}: the next attempt waits the asked-for delay instead of the backoff, and counts`, async () => {
          const run = await workflow.start("retry-after", { kind, ms: 80 });
          await expect(run.result()).resolves.toBe(2);
          const view = await viewOf(run.id);
          const failed = eventOf(view, "step_failed");
          expect(failed.payload).toMatchObject({ attempt: 1, retryable: true, retry_at: failed.at + 80 });
          const second = view.events.find((e) => e.type === "step_started" && e.payload.attempt === 2) as RunEvent;
          expect(second.at).toBeGreaterThanOrEqual(failed.at + 80);
        });
      }

      it("still counts attempts: always asking to retry ends in attempts_exhausted", async () => {
        const run = await workflow.start("always-busy");
        expect((await rejection(run.result())).message).toBe("busy");
        const view = await viewOf(run.id);
        expect(shape(view.events)).toEqual(EXHAUSTED_AFTER_TWO_LOG);
        expect(view.events.at(-1)?.payload).toEqual({ reason: "busy", cause: "attempts_exhausted" });
      });

      it("a restart during the wait keeps the asked-for time", async () => {
        const run = await workflow.start("retry-after", { ms: 300 });
        const failed = await viewWhen(run.id, (v) => lastType(v) === "step_failed");
        await restart();
        expect(await resultAfterRestart(run.id)).toBe(2);
        const view = await viewOf(run.id);
        const second = view.events.find((e) => e.type === "step_started" && e.payload.attempt === 2) as RunEvent;
        expect(second.at).toBeGreaterThanOrEqual(eventOf(failed, "step_failed").payload.retry_at as number);
      });
    });

    describe("fast crash recovery", () => {
      it("a restart mid-step fails that attempt at once with reason interrupted (not after stepTimeoutMS) and retries it", async () => {
        const run = await workflow.start("crashy", null, { id: "crash-1" });
        await viewWhen(run.id, (v) => lastType(v) === "step_started");
        await restart();
        expect(await resultAfterRestart(run.id)).toBe(2);
        const view = await viewOf(run.id);
        expect(shape(view.events)).toEqual(RETRIED_ONCE_LOG);
        expect(view.events[2]?.payload).toEqual({ step: "start", attempt: 1, reason: "interrupted", retryable: true });
      });

      it("a restart mid-step with an event sent during the step: the event survives the interruption", async () => {
        const run = await workflow.start("inbox", null, { id: "inbox-crash" });
        await viewWhen(run.id, (v) => lastType(v) === "step_started");
        await workflow.send(run.id, "a", "kept");
        await restart();
        gates.open("inbox-crash");
        const view = await viewWhen(run.id, (v) => v.waitingFor?.name === "b");
        expect(shape(view.events).slice(0, 6)).toEqual([
          "workflow_created",
          "step_started(start,1)",
          "event_received(a)",
          "step_failed(start,1,retryable)",
          "step_started(start,2)",
          "step_completed(start->first)",
        ]);
        await workflow.send(run.id, "b", "then");
        expect(await resultAfterRestart(run.id)).toEqual({
          first: { name: "a", payload: "kept" },
          second: { name: "b", payload: "then" },
        });
      });
    });
  });
}
