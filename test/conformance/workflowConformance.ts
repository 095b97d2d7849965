import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { PlatformError } from "#src/core/errors.ts";
import type { WorkflowDefinition } from "#src/engine/definition.ts";
import { NonRetryableError } from "#src/engine/nonRetryableError.ts";
import { RetryAfterError } from "#src/engine/retryAfterError.ts";
import { describeFlowControlConformance } from "./flowControlConformance.ts";
import {
  getWorkflowDefinition,
  installWorkflowBackend,
  resetWorkflowsForTests,
  workflow,
  type WorkflowBackend,
} from "#src/engine/workflowApi.ts";
import { describeRunOperationsConformance } from "#test/conformance/runOperationsConformance.ts";

/**
 * One behaviour, every backend: the same cases run against the in-memory
 * backend and the node:sqlite backend here, and against the Durable Object
 * backend inside workerd. Everything goes through the public `workflow` API.
 * No Node or Cloudflare imports: only vitest and the engine core.
 */
export interface WorkflowBackendUnderTest {
  backend: WorkflowBackend;
  close(): void | Promise<void>;
  /**
   * A crash and restart of the host: executions in memory are gone (a step in
   * flight never commits), the log stays. Resolves with the backend to use
   * from then on (the suite installs it).
   */
  restart(): Promise<WorkflowBackend>;
  /** One recovery sweep, as the every-minute cron runs it (stuck runs, stranded runs, retention). */
  sweep(): Promise<void>;
}

export type MakeWorkflowBackend = (
  definitions: (name: string) => WorkflowDefinition | undefined,
) => WorkflowBackendUnderTest | Promise<WorkflowBackendUnderTest>;

/** Spec payload fields per event type (and those beyond the spec): nothing more may appear in `workflow.get(...).events`. */
const PAYLOAD_FIELDS: Record<string, string[]> = {
  workflow_created: [
    "workflowName",
    "writes",
    "version",
    "rerunOf",
    "flow_key",
    "queued",
    "idempotency_key",
    "idempotent_until",
  ],
  step_started: ["attempt", "step", "event_seq"],
  step_completed: [
    "next_step",
    "step",
    "writes",
    "wake_at",
    "waiting_for",
    "timeout_at",
    "children",
    "copied_from_seq",
  ],
  step_failed: ["attempt", "reason", "retryable", "step", "retry_at", "error"],
  workflow_completed: ["result"],
  workflow_failed: ["cause", "reason"],
  event_received: ["name", "payload"],
  workflow_cancelled: ["reason"],
  workflow_paused: ["reason"],
  workflow_resumed: [],
  start_replaced: ["writes"],
  workflow_dequeued: [],
  child_finished: ["run_id", "workflow", "status", "result", "error"],
};

function shape(events: readonly { type: string; payload: object }[]): string[] {
  return events.map(({ type, payload }) => {
    const p = payload as Record<string, unknown>;
    if (type === "step_started") return `step_started(${p.step},${p.attempt})`;
    if (type === "step_failed") return `step_failed(${p.step},${p.attempt},${p.retryable ? "retryable" : "final"})`;
    if (type === "event_received") return `event_received(${p.name})`;
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
  describeCoreConformance(name, makeBackend);
  describeBeyondSpecConformance(name, makeBackend);
  describeRunOperationsConformance(name, makeBackend);
  describeFlowControlConformance(name, makeBackend);
  describeChildrenConformance(name, makeBackend);
}

function describeCoreConformance(name: string, makeBackend: MakeWorkflowBackend): void {
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
      expect(page1.runs[2]).toEqual({
        id: done2.id,
        workflowId: done2.id,
        name: "greet",
        status: "completed",
        step: "finish",
        createdAt: expect.any(Number),
        updatedAt: expect.any(Number),
        expiresAt: expect.any(Number),
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

type RunView = NonNullable<Awaited<ReturnType<typeof workflow.get>>>;
type RunEvent = RunView["events"][number];

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The run's view once `check` holds (polled; a backend in another isolate cannot be awaited directly). */
async function viewWhen(runId: string, check: (view: RunView) => boolean): Promise<RunView> {
  let seen: RunView | null = null;
  await vi.waitFor(
    async () => {
      seen = await workflow.get(runId);
      if (!seen || !check(seen)) throw new Error(`not yet: ${shape(seen?.events ?? []).join(", ")}`);
    },
    { timeout: 8000, interval: 5 },
  );
  return seen as unknown as RunView;
}

function eventOf<T extends RunEvent["type"]>(
  view: RunView,
  type: T,
  step?: string,
  from = 0,
): Extract<RunEvent, { type: T }> {
  const found = view.events.find(
    (e, i) => i >= from && e.type === type && (step === undefined || (e.payload as { step?: string }).step === step),
  );
  if (!found) throw new Error(`no ${type}${step ? `(${step})` : ""} in ${shape(view.events).join(", ")}`);
  return found as Extract<RunEvent, { type: T }>;
}

/** A run's result after a restart: the handle of the previous host is gone with it, so read the run until it ends. */
async function resultAfterRestart(runId: string): Promise<unknown> {
  const view = await viewWhen(runId, (v) => v.status !== "running");
  expect(view.status).toBe("completed");
  return view.result;
}

const lastType = (view: RunView) => view.events[view.events.length - 1]?.type;

/**
 * Beyond the spec: durable sleep, waiting for an event, cancel, retry-after
 * and fast crash recovery, with the races between them and a host restart in
 * the middle of each.
 */
function describeBeyondSpecConformance(name: string, makeBackend: MakeWorkflowBackend): void {
  describe(`workflow conformance, beyond the spec: ${name}`, () => {
    let subject: WorkflowBackendUnderTest;
    const opened = new Set<string>();
    /** Workflow ids whose gated step has returned (its outcome may then be committed or dropped). */
    const returned = new Set<string>();
    const gate = async (id: string) => {
      while (!opened.has(id) && !opened.has("*")) await pause(2);
    };
    const restart = async () => {
      installWorkflowBackend(await subject.restart());
    };

    beforeEach(async () => {
      resetWorkflowsForTests();
      opened.clear();
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
          await gate(ctx.workflowId);
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
            await gate(ctx.workflowId);
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
            if (ctx.attempt === 1) await gate(ctx.workflowId);
            return { done: true, result: ctx.attempt };
          },
        },
        // A timeout of a minute: only `interrupted` lets the test finish in time.
        { stepTimeoutMS: 60_000, backoff: { initialMS: 1, jitter: 0 } },
      );
      subject = await makeBackend(getWorkflowDefinition);
      installWorkflowBackend(subject.backend);
    });

    afterEach(async () => {
      opened.add("*");
      await subject.close();
      resetWorkflowsForTests();
    });

    describe("durable sleep", () => {
      it("sleepMS: step_completed records wake_at and the next step is not claimed before it", async () => {
        const run = await workflow.start("sleeper", { sleepMS: 60 });
        await expect(run.result()).resolves.toBe("woke");
        const view = (await workflow.get(run.id)) as RunView;
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
        const view = (await workflow.get(run.id)) as RunView;
        expect(eventOf(view, "step_completed", "start").payload.wake_at).toBe(until);
        expect(eventOf(view, "step_started", "woke").at).toBeGreaterThanOrEqual(until);
      });

      it("a sleep over a year fails the run without retry (invalid_input)", async () => {
        const run = await workflow.start("too-long");
        const error = await rejection(run.result());
        expect(error.code).toBe("workflow_failed");
        expect(error.message).toMatch(/at most .*a year/);
        expect(shape(((await workflow.get(run.id)) as RunView).events).slice(-2)).toEqual([
          "step_failed(start,1,final)",
          "workflow_failed",
        ]);
      });

      it("a restart during the sleep neither skips nor forgets it", async () => {
        const run = await workflow.start("sleeper", { sleepMS: 300 });
        const sleeping = await viewWhen(run.id, (v) => v.wakeAt !== undefined);
        await restart();
        expect(await resultAfterRestart(run.id)).toBe("woke");
        const view = (await workflow.get(run.id)) as RunView;
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
        const view = (await workflow.get(run.id)) as RunView;
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
        const view = (await workflow.get(run.id)) as RunView;
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
        opened.add("inbox-1");
        await expect(run.result()).resolves.toEqual({
          first: { name: "a", payload: 2 },
          second: { name: "b", payload: 1 },
        });
        const view = (await workflow.get(run.id)) as RunView;
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
        const view = (await workflow.get(run.id)) as RunView;
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
        const view = (await workflow.get(run.id)) as RunView;
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
        const view = (await workflow.get(run.id)) as RunView;
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
        expect(
          ((await workflow.get(run.id)) as RunView).events.filter((e) => e.type === "event_received"),
        ).toHaveLength(1);
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
        expect(shape(((await workflow.get(run.id)) as RunView).events).slice(-2)).toEqual([
          "step_completed(start->woke)",
          "workflow_cancelled",
        ]);
      });

      it("cancel vs step commit: the step in flight finishes but its result is dropped", async () => {
        const run = await workflow.start("cancellable", null, { id: "cancel-1" });
        await viewWhen(run.id, (v) => lastType(v) === "step_started");
        await workflow.cancel(run.id);
        opened.add("cancel-1");
        await vi.waitFor(() => expect(returned.has("cancel-1")).toBe(true), { timeout: 5000, interval: 5 });
        await pause(20);
        const view = (await workflow.get(run.id)) as RunView;
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
        expect(lastType((await workflow.get(run.id)) as RunView)).toBe("workflow_cancelled");
      });
    });

    describe("retry-after", () => {
      for (const kind of ["RetryAfterError", "rate_limited"] as const) {
        it(`${kind}: the next attempt waits the asked-for delay instead of the backoff, and counts`, async () => {
          const run = await workflow.start("retry-after", { kind, ms: 80 });
          await expect(run.result()).resolves.toBe(2);
          const view = (await workflow.get(run.id)) as RunView;
          const failed = eventOf(view, "step_failed");
          expect(failed.payload).toMatchObject({ attempt: 1, retryable: true, retry_at: failed.at + 80 });
          const second = view.events.find((e) => e.type === "step_started" && e.payload.attempt === 2) as RunEvent;
          expect(second.at).toBeGreaterThanOrEqual(failed.at + 80);
        });
      }

      it("still counts attempts: always asking to retry ends in attempts_exhausted", async () => {
        const run = await workflow.start("always-busy");
        expect((await rejection(run.result())).message).toBe("busy");
        const view = (await workflow.get(run.id)) as RunView;
        expect(shape(view.events)).toEqual([
          "workflow_created",
          "step_started(start,1)",
          "step_failed(start,1,retryable)",
          "step_started(start,2)",
          "step_failed(start,2,final)",
          "workflow_failed",
        ]);
        expect(view.events.at(-1)?.payload).toEqual({ reason: "busy", cause: "attempts_exhausted" });
      });

      it("a restart during the wait keeps the asked-for time", async () => {
        const run = await workflow.start("retry-after", { ms: 300 });
        const failed = await viewWhen(run.id, (v) => lastType(v) === "step_failed");
        await restart();
        expect(await resultAfterRestart(run.id)).toBe(2);
        const view = (await workflow.get(run.id)) as RunView;
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
        const view = (await workflow.get(run.id)) as RunView;
        expect(shape(view.events)).toEqual([
          "workflow_created",
          "step_started(start,1)",
          "step_failed(start,1,retryable)",
          "step_started(start,2)",
          "step_completed(start)",
          "workflow_completed",
        ]);
        expect(view.events[2]?.payload).toEqual({ step: "start", attempt: 1, reason: "interrupted", retryable: true });
      });

      it("a restart mid-step with an event sent during the step: the event survives the interruption", async () => {
        const run = await workflow.start("inbox", null, { id: "inbox-crash" });
        await viewWhen(run.id, (v) => lastType(v) === "step_started");
        await workflow.send(run.id, "a", "kept");
        await restart();
        opened.add("inbox-crash");
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

/**
 * Beyond the spec: child runs. Each child is a run of its own, started
 * exactly once; the parent waits, woken by its children's ends, then reads
 * their outcomes in order; cancelling it cancels them; restarts in between
 * lose nothing.
 */
function describeChildrenConformance(name: string, makeBackend: MakeWorkflowBackend): void {
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
      workflow("bad-children", {
        start: async (ctx) => ({ step: "start", children: ctx.data }),
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

    it("waits for its children (status and progress in its view), and a child's failure does not fail it", async () => {
      const parent = await workflow.start("fan-out", { count: 3, gate: "slow", fail: 1 });
      const waiting = await viewWhen(parent.id, (v) => v.waitingForChildren !== undefined);
      expect(waiting).toMatchObject({ status: "running", waitingForChildren: { total: 3, finished: 0 } });
      expect(waiting.children?.map((child) => child.status)).toEqual(["running", "running", "running"]);
      opened.add("slow");
      const outcomes = (await parent.result()) as { status: string; result?: number; error?: string }[];
      expect(outcomes).toEqual([
        expect.objectContaining({ status: "completed", result: 0 }),
        expect.objectContaining({ status: "failed", error: "no square for 1" }),
        expect.objectContaining({ status: "completed", result: 4 }),
      ]);
      expect((await workflow.get(parent.id))?.waitingForChildren).toBeUndefined();
    });

    it("cancelling the parent during the fan-out cancels its running children", async () => {
      const parent = await workflow.start("fan-out", { count: 5, gate: "never" });
      const waiting = await viewWhen(parent.id, (v) => v.waitingForChildren !== undefined);
      await workflow.cancel(parent.id, "stop");
      for (const child of waiting.children ?? []) {
        const view = await viewWhen(child.runId, (v) => v.status !== "running");
        expect(view).toMatchObject({ status: "cancelled", parentRunId: parent.id });
      }
      expect((await workflow.get(parent.id))?.status).toBe("cancelled");
      expect((await workflow.list({ status: "running" })).runs).toEqual([]);
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
