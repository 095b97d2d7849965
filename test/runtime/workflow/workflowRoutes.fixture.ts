/**
 * The project of the workflow-route tests: workflows registered at top level, as user code does,
 * and a tiny router, wrapped by the real entry (createPlatformWorker) with the Durable Object
 * bindings. workflowRoutes.client.ts calls it the way the platform does.
 */
import { env } from "cloudflare:test";
import { Router } from "itty-router";
import { afterEach, beforeAll, beforeEach, vi } from "vitest";
import { systemClock, type Clock } from "#src/engine/api/clock.ts";
import { workflowRunHost } from "#src/objects/workflowRunHost.ts";
import { createPlatformWorker } from "#src/runtime/entry/createPlatformWorker.ts";
import type { PlatformEnv } from "#src/runtime/entry/platformEnv.ts";
import type { WorkflowActorEnv } from "#src/runtime/workflow/workflowActorClient.ts";
// What user code pulls in by importing `workflow` from "platform": the engine plus its wiring into the worker's runtime.
import { workflow } from "#src/runtime/workflow/index.ts";
import { keyedGates, PROGRESS_TEST_TIMEOUT_MS } from "#test/support/workflow/index.ts";

export const SECRET = "ab".repeat(32);
export const OTHER_SECRET = "cd".repeat(32);
export const PROJECT_ID = "7";
export const ORIGIN = "https://shop.internal";

/** Gates keyed by workflow id, which the test creates before a run starts (see keyedGates). */
export const gates = keyedGates();

/** Simulated time added to the actors' clock (useTestClock): a backoff waited out, a step-loop budget spent. */
let clockOffset = 0;
const testClock: Clock = () => systemClock() + clockOffset;
export function advanceClock(ms: number): void {
  clockOffset += ms;
}

// The attempts of each `flaky` run (registerWorkflows).
const flakyAttempts = new Map<string, number>();

/**
 * The project's workflows, as user code registers them at top level. Called before each file's
 * tests rather than at import: the test files share one module graph (`isolate: false`), and what a
 * file registered is forgotten after it (test/support/forgetRegistrationsAfterEachFile.ts).
 */
function registerWorkflows(): void {
  workflow("greet", {
    start: async (ctx) => {
      ctx.write("greeting", "hello");
      return { step: "finish" };
    },
    finish: async (ctx) => ({ done: true, result: { text: `${ctx.scratchpad.greeting} ${ctx.data?.name}` } }),
  });
  workflow("gated", {
    start: async (ctx) => {
      await gates.passGate(ctx.workflowId);
      return { done: true, result: ctx.data };
    },
  });
  workflow(
    "patient",
    {
      start: async () => {
        throw new Error("later");
      },
    },
    { backoff: { initialMS: 60_000, maxMS: 60_000, jitter: 0 } },
  );
  // Fails its first attempt, then waits out a minute's backoff: a run that waits for its alarm.
  workflow(
    "flaky",
    {
      start: async (ctx) => {
        const attempt = (flakyAttempts.get(ctx.runId) ?? 0) + 1;
        flakyAttempts.set(ctx.runId, attempt);
        if (attempt === 1) throw new Error("not yet");
        return { done: true, result: { attempt } };
      },
    },
    { backoff: { initialMS: 60_000, maxMS: 60_000, jitter: 0 } },
  );
  // Its first step spends the whole step-loop budget (simulated), so the loop stops with work left.
  workflow("marathon", {
    start: async (ctx) => {
      await gates.gateFor(ctx.workflowId).promise;
      clockOffset += 51_000;
      return { step: "finish" };
    },
    finish: async () => ({ done: true, result: "finished" }),
  });
  // Waits for an `approval` event (beyond the spec), then ends with it.
  workflow("approval", {
    start: async () => ({ step: "approved", waitFor: "approval" }),
    approved: async (ctx) => ({ done: true, result: ctx.event }),
  });
}

const router = Router();
router.get("/hello", () => new Response("hello from user code"));
router.all("*", () => {
  project.userCodeCalls++;
  return new Response("user code");
});
export const worker = createPlatformWorker(router);

/** The bindings the platform gives a project worker that uses workflows. */
export function projectEnvFor(id: string | number = PROJECT_ID, secret = SECRET): PlatformEnv & WorkflowActorEnv {
  return {
    PLATFORM_WORKER_SECRET: secret,
    PLATFORM_PROJECT_ID: String(id),
    WORKFLOW_RUNS: env.WORKFLOW_RUNS,
    WORKFLOW_RUN_INDEX: env.WORKFLOW_RUN_INDEX,
  };
}

/** The project worker's env of this test (a test may deploy it as another project) and how often user code ran. */
export const project = { env: projectEnvFor(), userCodeCalls: 0 };

/**
 * Each test starts with no gates, user code not yet called and a fresh environment object (the
 * entry wrapper initializes the platform, installing the Durable Object backend, on its first
 * request, as in a fresh isolate); its gates are opened after it.
 */
export function useProjectWorker(): void {
  vi.setConfig({ testTimeout: PROGRESS_TEST_TIMEOUT_MS });
  beforeAll(registerWorkflows);
  beforeEach(() => {
    gates.openAll();
    project.userCodeCalls = 0;
    project.env = projectEnvFor();
  });
  afterEach(() => gates.openAll());
}

/** The actors on a clock the test moves (advanceClock) for the tests of the calling describe. */
export function useTestClock(): void {
  beforeEach(() => {
    clockOffset = 0;
    workflowRunHost.clock = testClock;
  });
  afterEach(() => {
    workflowRunHost.clock = systemClock;
  });
}
