import { PlatformError } from "../core/errors.ts";
import type { BackoffOptions } from "./backoff.ts";
import { type FlowControl, type FlowControlOptions, toFlowControl } from "./flowControl.ts";
import type { StepFunction } from "./stepContext.ts";
import { toWorkflowSchedule, type WorkflowSchedule, type WorkflowScheduleOption } from "./workflowSchedule.ts";

/**
 * Engine defaults: the single place they are written down.
 * - `maxAttempts: 3` — attempts per step, the first included (not "retries").
 * - `backoff` — 1 s after the first failure, doubling, capped at 60 s, ±20 % jitter.
 * - `stepTimeoutMS: 30_000` — one attempt may run 30 s before it is recorded as failed with reason "timeout".
 * - `stepLoopBudgetMS: 50_000` — one execution claims no new step after 50 s (spec limit); the run continues in a fresh execution.
 */
export const WORKFLOW_DEFAULTS = Object.freeze({
  maxAttempts: 3,
  backoff: Object.freeze({ initialMS: 1000, factor: 2, maxMS: 60_000, jitter: 0.2 }) as Readonly<BackoffOptions>,
  stepTimeoutMS: 30_000,
  stepLoopBudgetMS: 50_000,
});

/**
 * Upper bounds on the options (beyond the spec): generous for real workloads, but no definition can
 * keep a run retrying, sleeping or holding a step for an unbounded time.
 * - `maxAttempts: 100` — attempts per step, the first included.
 * - `backoffMS: 86_400_000` (24 h) — the largest `backoff.initialMS` and `backoff.maxMS`.
 * - `stepTimeoutMS: 900_000` (15 min) — the longest one attempt may run.
 */
export const WORKFLOW_LIMITS = Object.freeze({
  maxAttempts: 100,
  backoffMS: 86_400_000,
  stepTimeoutMS: 900_000,
});

/** The first step of every workflow (spec). */
export const FIRST_STEP = "start";

export interface WorkflowOptions extends FlowControlOptions {
  /** Beyond the spec: start one run per tick (workflowSchedule.ts). */
  schedule?: WorkflowScheduleOption;
  maxAttempts?: number;
  backoff?: Partial<BackoffOptions>;
  stepTimeoutMS?: number;
}

/**
 * The steps of a workflow. `any` by default so user steps can read `ctx.data.name` without declaring a type;
 * `workflow<Data, Pad, Result>(…)` types the start data, the scratchpad and the result.
 */
// biome-ignore lint/suspicious/noExplicitAny: public defaults: start data, scratchpad and result are user JSON read without declaring a type
export type WorkflowSteps<Data = any, Pad extends object = Record<string, any>, Result = any> = Record<
  string,
  StepFunction<Data, Pad, Result>
>;

/**
 * A validated workflow: what `workflow(name, steps, options)` registers and the engine executes.
 * Its type parameters carry the types the steps were written with, so `testWorkflow(definition, data)`
 * checks the start data and types `run.result()`.
 */
// biome-ignore lint/suspicious/noExplicitAny: public defaults, as WorkflowSteps'
export interface WorkflowDefinition<Data = any, Pad extends object = Record<string, any>, Result = any> {
  readonly name: string;
  readonly steps: Readonly<WorkflowSteps<Data, Pad, Result>>;
  /** Null when the workflow starts only when asked to. */
  readonly schedule: WorkflowSchedule | null;
  /** Beyond the spec: concurrency, throttle and debounce per key (flowControl.ts); null when it has none. */
  readonly flow: FlowControl | null;
  readonly maxAttempts: number;
  readonly backoff: Readonly<BackoffOptions>;
  readonly stepTimeoutMS: number;
}

const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const MAX_STEP_NAME_LENGTH = 256;

/** Validates and freezes a definition; throws `invalid_input` naming the bad part. */
// biome-ignore lint/suspicious/noExplicitAny: public defaults, as WorkflowSteps'
export function defineWorkflow<Data = any, Pad extends object = Record<string, any>, Result = any>(
  name: string,
  steps: WorkflowSteps<Data, Pad, Result>,
  options: WorkflowOptions = {},
): WorkflowDefinition<Data, Pad, Result> {
  if (typeof name !== "string" || !NAME_PATTERN.test(name)) {
    throw invalid(
      `Workflow name ${JSON.stringify(name)} is invalid: use 1-64 letters, digits, "_", "." or "-", starting with a letter or digit`,
    );
  }
  if (typeof steps !== "object" || steps === null || Array.isArray(steps)) {
    throw invalid(
      `workflow("${name}") needs an object of step functions, e.g. { start: async (ctx) => ({ done: true }) }`,
    );
  }
  const names = Object.keys(steps);
  if (!names.includes(FIRST_STEP)) {
    throw invalid(
      `workflow("${name}") has no "${FIRST_STEP}" step; every workflow begins with a step named "${FIRST_STEP}"`,
    );
  }
  for (const step of names) {
    if (step.length === 0 || step.length > MAX_STEP_NAME_LENGTH || hasControlCharacter(step)) {
      throw invalid(
        `workflow("${name}") step name ${JSON.stringify(step)} is invalid: 1-${MAX_STEP_NAME_LENGTH} characters, no control characters`,
      );
    }
    if (typeof steps[step] !== "function") throw invalid(`workflow("${name}") step "${step}" is not a function`);
  }
  const schedule = toWorkflowSchedule(name, options.schedule);
  const flow = toFlowControl(name, options);
  const maxAttempts = options.maxAttempts ?? WORKFLOW_DEFAULTS.maxAttempts;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > WORKFLOW_LIMITS.maxAttempts) {
    throw invalid(
      `workflow("${name}") maxAttempts must be an integer from 1 to ${WORKFLOW_LIMITS.maxAttempts} (attempts include the first), got ${maxAttempts}`,
    );
  }
  const stepTimeoutMS = options.stepTimeoutMS ?? WORKFLOW_DEFAULTS.stepTimeoutMS;
  if (!isPositiveFinite(stepTimeoutMS))
    throw invalid(`workflow("${name}") stepTimeoutMS must be a positive number of milliseconds, got ${stepTimeoutMS}`);
  if (stepTimeoutMS > WORKFLOW_LIMITS.stepTimeoutMS) {
    throw invalid(
      `workflow("${name}") stepTimeoutMS must be at most ${WORKFLOW_LIMITS.stepTimeoutMS} (15 minutes), got ${stepTimeoutMS}`,
    );
  }
  const backoff = { ...WORKFLOW_DEFAULTS.backoff, ...definedOnly(options.backoff ?? {}) };
  if (!(Number.isFinite(backoff.initialMS) && backoff.initialMS >= 0))
    throw invalid(`workflow("${name}") backoff.initialMS must be >= 0, got ${backoff.initialMS}`);
  if (backoff.initialMS > WORKFLOW_LIMITS.backoffMS) {
    throw invalid(
      `workflow("${name}") backoff.initialMS must be at most ${WORKFLOW_LIMITS.backoffMS} (24 hours), got ${backoff.initialMS}`,
    );
  }
  if (!(Number.isFinite(backoff.factor) && backoff.factor >= 1))
    throw invalid(`workflow("${name}") backoff.factor must be >= 1, got ${backoff.factor}`);
  if (!(Number.isFinite(backoff.maxMS) && backoff.maxMS >= backoff.initialMS)) {
    throw invalid(
      `workflow("${name}") backoff.maxMS must be >= backoff.initialMS (${backoff.initialMS}), got ${backoff.maxMS}`,
    );
  }
  if (backoff.maxMS > WORKFLOW_LIMITS.backoffMS) {
    throw invalid(
      `workflow("${name}") backoff.maxMS must be at most ${WORKFLOW_LIMITS.backoffMS} (24 hours), got ${backoff.maxMS}`,
    );
  }
  if (!(Number.isFinite(backoff.jitter) && backoff.jitter >= 0 && backoff.jitter <= 1)) {
    throw invalid(`workflow("${name}") backoff.jitter must be between 0 and 1, got ${backoff.jitter}`);
  }
  return Object.freeze({
    name,
    steps: Object.freeze({ ...steps }),
    schedule,
    flow,
    maxAttempts,
    backoff: Object.freeze(backoff),
    stepTimeoutMS,
  });
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function isPositiveFinite(value: number): boolean {
  return typeof value === "number" && Number.isFinite(value) && value > 0;
}

function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

function invalid(message: string): PlatformError {
  return new PlatformError("invalid_input", message);
}
