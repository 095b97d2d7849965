/**
 * What the WorkflowRunActor tests share: the actors' clock the tests move, gates steps wait on,
 * and the workflows several files register (each under its own names). Reading an actor's log,
 * alarm and index is in #test/support/workerd; checking a log, in #test/support/workflow.
 */
import { afterEach, beforeEach, vi } from "vitest";
import { systemClock, type Clock } from "#src/engine/api/clock.ts";
import type { WorkflowSteps } from "#src/engine/api/definition.ts";
import { NonRetryableError } from "#src/engine/execution/nonRetryableError.ts";
import { installWorkflowBackend, resetWorkflowsForTests, workflow } from "#src/engine/api/workflowApi.ts";
import { workflowRunHost } from "#src/objects/workflowRunHost.ts";
import { durableObjectWorkflowBackend } from "#src/runtime/workflow/durableObjectBackend.ts";
import { actorEnv } from "#test/support/workerd/workflowActors.ts";
import { keyedGates, PROGRESS_TEST_TIMEOUT_MS, shape as eventShape } from "#test/support/workflow/index.ts";

/** type + step + attempt + reason + retryable of each event, for exact sequence assertions. */
export const shape = (events: readonly { type: string; payload: object }[]) => eventShape(events, { reasons: true });

/** Whether a promise settles within 100 ms: "pending" shows a wait that something else must end. */
export function settled<T>(promise: Promise<T>): Promise<"settled" | "pending"> {
  return Promise.race([
    promise.then(() => "settled" as const),
    new Promise<"pending">((resolve) => setTimeout(() => resolve("pending"), 100)),
  ]);
}

/** Gates keyed by workflow id (see keyedGates for why the test creates each before its run starts). */
export const gates = keyedGates();

/**
 * Shapes several files need, each registered under the describe's own name: a run that
 * waits at its gate in `start` (stepTimeoutMS 10 s), one whose `start` records its attempt
 * (2 attempts, 10 ms backoff, stepTimeoutMS 1 s), one that fails for good at once, and one
 * that completes at once with "other".
 */
function registerGated(name: string): void {
  workflow(
    name,
    {
      start: async (ctx) => {
        note(ctx);
        ctx.write("opened", true);
        await gates.passGate(ctx.workflowId);
        return { step: "finish" };
      },
      finish: async (ctx) => {
        note(ctx);
        return { done: true, result: { data: ctx.data, opened: ctx.scratchpad.opened } };
      },
    },
    { stepTimeoutMS: 10_000 },
  );
}

function registerRecoverable(name: string): void {
  workflow(
    name,
    {
      start: async (ctx) => {
        note(ctx);
        ctx.write("n", ctx.attempt);
        return { step: "finish" };
      },
      finish: async (ctx) => {
        note(ctx);
        return { done: true, result: { n: ctx.scratchpad.n } };
      },
    },
    { maxAttempts: 2, backoff: { initialMS: 10, jitter: 0 }, stepTimeoutMS: 1000 },
  );
}

function registerFatal(name: string): void {
  workflow(name, {
    start: async () => {
      throw new NonRetryableError("card declined");
    },
  });
}

function registerOther(name: string): void {
  workflow(name, { start: async () => ({ done: true, result: "other" }) });
}

export const register = {
  gated: registerGated,
  recoverable: registerRecoverable,
  fatal: registerFatal,
  other: registerOther,
};

/** Step invocations as "<workflowId>:<step>#<attempt>", in order. */
export const invocations: string[] = [];

export type StepCall = { workflowId: string; step: string; attempt: number };
/** Called first by every step that the tests follow through `invocations`. */
export function note(ctx: StepCall): void {
  invocations.push(`${ctx.workflowId}:${ctx.step}#${ctx.attempt}`);
}

/**
 * Steps named `names` in a chain (start → … → the last), each noting its call and doing `work`
 * before it goes on; the last ends the run with `result`.
 */
export function chainOf(names: string[], work: () => unknown, result: string): WorkflowSteps {
  return Object.fromEntries(
    names.map((name, i) => [
      name,
      async (ctx: StepCall) => {
        note(ctx);
        await work();
        const next = names[i + 1];
        return next === undefined ? { done: true as const, result } : { step: next };
      },
    ]),
  );
}

/** Simulated time added to the actors' clock (the step-loop budget tests). */
let clockOffset = 0;
/** The clock the actors are given (see useActorTestHost), and the one the tests plant events with. */
export const testClock: Clock = () => systemClock() + clockOffset;
/** Moves the actors' clock on by `ms` of simulated time. */
export function advanceClock(ms: number): void {
  clockOffset += ms;
}

/**
 * Each test starts with no workflows registered (each describe registers its own, named
 * "<describe>.<role>", in its beforeEach), no gates, the actors on the test clock and the
 * Durable Object backend installed; its gates are opened after it.
 */
export function useActorTestHost(): void {
  vi.setConfig({ testTimeout: PROGRESS_TEST_TIMEOUT_MS });
  beforeEach(() => {
    resetWorkflowsForTests();
    gates.openAll();
    invocations.length = 0;
    clockOffset = 0;
    workflowRunHost.clock = testClock;
    installWorkflowBackend(durableObjectWorkflowBackend(actorEnv));
  });
  afterEach(() => {
    vi.restoreAllMocks();
    workflowRunHost.clock = systemClock;
    gates.openAll();
  });
}
