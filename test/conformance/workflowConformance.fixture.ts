import { afterEach, beforeEach, expect, vi } from "vitest";
import type { WorkflowDefinition } from "#src/engine/api/definition.ts";
import { isLiveStatus } from "#src/engine/execution/runSummary.ts";
import {
  getWorkflowDefinition,
  installWorkflowBackend,
  resetWorkflowsForTests,
  workflow,
  type WorkflowBackend,
} from "#src/engine/api/workflowApi.ts";
import { shape } from "#test/support/workflow/index.ts";

/** A backend the conformance suites run against, as each implementation's test file makes it. */
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

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Gates keyed by workflow id that steps wait at until the test opens them. A step polls a flag on
 * its own timers rather than await a promise the test resolves: in workerd a step resumed by the
 * test's promise would continue in the test's context, not its actor's.
 */
export function pollingGates() {
  const opened = new Set<string>();
  return {
    open: (id: string) => void opened.add(id),
    async wait(id: string) {
      while (!opened.has(id) && !opened.has("*")) await pause(2);
    },
    /** Lets every step through (after a test, so nothing is left waiting). */
    openAll: () => void opened.add("*"),
    clear: () => opened.clear(),
  };
}

/**
 * Before each test: no workflows but those `register` defines, and a fresh backend from
 * `makeBackend`, installed; after it, its gates open and the backend closed. Answers the backend
 * under test (`subject`, read it inside a test) and a host restart that installs the backend it comes back with.
 */
export function useBackendUnderTest(
  makeBackend: MakeWorkflowBackend,
  gates: ReturnType<typeof pollingGates>,
  register: () => void,
) {
  let subject: WorkflowBackendUnderTest;
  beforeEach(async () => {
    resetWorkflowsForTests();
    gates.clear();
    register();
    subject = await makeBackend(getWorkflowDefinition);
    installWorkflowBackend(subject.backend);
  });
  afterEach(async () => {
    gates.openAll();
    await subject.close();
    resetWorkflowsForTests();
  });
  return {
    /** The backend of the test under way. */
    get subject() {
      return subject;
    },
    restart: async () => {
      installWorkflowBackend(await subject.restart());
    },
  };
}

export type RunView = NonNullable<Awaited<ReturnType<typeof workflow.get>>>;
export type RunEvent = RunView["events"][number];

/** A run's view, which the test knows exists. */
export async function viewOf(runId: string): Promise<RunView> {
  const view = await workflow.get(runId);
  if (!view) throw new Error(`no run ${runId}`);
  return view;
}

/** The run's view once `check` holds (polled; a backend in another isolate cannot be awaited directly). */
export async function viewWhen(runId: string, check: (view: RunView) => boolean): Promise<RunView> {
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

/** The first event of a type (of a step) in a view, from index `from` on. */
export function eventOf<T extends RunEvent["type"]>(
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
export async function resultAfterRestart(runId: string): Promise<unknown> {
  const view = await viewWhen(runId, (v) => !isLiveStatus(v.status));
  expect(view.status).toBe("completed");
  return view.result;
}

export const lastType = (view: RunView) => view.events[view.events.length - 1]?.type;

/** The payload fields per event type: nothing more may appear in `workflow.get(...).events`. */
export const PAYLOAD_FIELDS: Record<string, string[]> = {
  workflow_created: [
    "workflowName",
    "writes",
    "version",
    "rerunOf",
    "parent_run_id",
    "flow_key",
    "flow_priority",
    "flow_fairness",
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
    "waiting_for_run",
    "timeout_at",
    "children",
    "copied_from_seq",
  ],
  step_failed: ["attempt", "reason", "retryable", "step", "retry_at", "error"],
  workflow_completed: ["result"],
  workflow_failed: ["cause", "reason"],
  event_received: ["name", "payload", "via", "callback"],
  workflow_cancelled: ["reason"],
  workflow_paused: ["reason"],
  workflow_resumed: [],
  start_replaced: ["writes"],
  workflow_dequeued: [],
  child_finished: ["run_id", "workflow", "status", "result", "error"],
};
