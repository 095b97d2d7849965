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
 * - `stepLoopBudgetMS: 50_000` — one execution claims no new step after 50 s; the run continues in a fresh execution.
 */
export const WORKFLOW_DEFAULTS = Object.freeze({
  maxAttempts: 3,
  /** A finished run (completed, failed, cancelled) is deleted 30 days after it ended. */
  retentionMS: 30 * 24 * 60 * 60 * 1000,
  backoff: Object.freeze({ initialMS: 1000, factor: 2, maxMS: 60_000, jitter: 0.2 }) as Readonly<BackoffOptions>,
  stepTimeoutMS: 30_000,
  stepLoopBudgetMS: 50_000,
});

/**
 * Upper bounds on the options: generous for real workloads, but no definition can
 * keep a run retrying, sleeping or holding a step for an unbounded time.
 * - `maxAttempts: 100` — attempts per step, the first included.
 * - `backoffMS: 86_400_000` (24 h) — the largest `backoff.initialMS` and `backoff.maxMS`.
 * - `stepTimeoutMS: 900_000` (15 min) — the longest one attempt may run.
 * - `retentionMS`: from 1 s to 365 days.
 * - `renamed`: at most 1,000 old step names.
 */
export const WORKFLOW_LIMITS = Object.freeze({
  maxAttempts: 100,
  backoffMS: 86_400_000,
  stepTimeoutMS: 900_000,
  minRetentionMS: 1000,
  maxRetentionMS: 365 * 24 * 60 * 60 * 1000,
  renamedSteps: 1000,
});

/** The first step of every workflow. */
export const FIRST_STEP = "start";

export interface WorkflowOptions extends FlowControlOptions {
  /** Start one run per tick (workflowSchedule.ts). */
  schedule?: WorkflowScheduleOption;
  maxAttempts?: number;
  backoff?: Partial<BackoffOptions>;
  stepTimeoutMS?: number;
  /**
   * Old step names this code still answers for, `{ oldStep: "newStep" }`. A live run
   * whose log names `oldStep` (it is in it, will retry it, or will claim it next) goes on with `newStep`;
   * a push that would strand such a run is refused unless the old name is kept here.
   */
  renamed?: Record<string, string>;
  /** How long a finished run is kept before it is deleted; default 30 days, 1 s to 365 days. */
  retentionMS?: number;
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
  /** Concurrency, throttle and debounce per key (flowControl.ts); null when it has none. */
  readonly flow: FlowControl | null;
  readonly maxAttempts: number;
  readonly backoff: Readonly<BackoffOptions>;
  readonly stepTimeoutMS: number;
  /** Old step names and the steps that answer for them (empty when none). */
  readonly renamed: Readonly<Record<string, string>>;
  readonly retentionMS: number;
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
  const retentionMS = options.retentionMS ?? WORKFLOW_DEFAULTS.retentionMS;
  if (
    !Number.isInteger(retentionMS) ||
    retentionMS < WORKFLOW_LIMITS.minRetentionMS ||
    retentionMS > WORKFLOW_LIMITS.maxRetentionMS
  ) {
    throw invalid(
      `workflow("${name}") retentionMS must be an integer from ${WORKFLOW_LIMITS.minRetentionMS} (1 second) to ${WORKFLOW_LIMITS.maxRetentionMS} (365 days), got ${retentionMS}`,
    );
  }
  return Object.freeze({
    name,
    steps: Object.freeze({ ...steps }),
    schedule,
    flow,
    maxAttempts,
    backoff: Object.freeze(backoff),
    stepTimeoutMS,
    renamed: checkRenamed(name, names, options.renamed),
    retentionMS,
  });
}

/** `{ oldStep: "newStep" }`: each old name is not a step any more, each new one is. */
function checkRenamed(name: string, steps: string[], renamed: unknown): Readonly<Record<string, string>> {
  if (renamed === undefined) return Object.freeze({});
  if (typeof renamed !== "object" || renamed === null || Array.isArray(renamed))
    throw invalid(`workflow("${name}") renamed must be an object like { oldStep: "newStep" }`);
  const entries = Object.entries(renamed as Record<string, unknown>);
  if (entries.length > WORKFLOW_LIMITS.renamedSteps)
    throw invalid(`workflow("${name}") renamed may name at most ${WORKFLOW_LIMITS.renamedSteps} old steps`);
  for (const [old, now] of entries) {
    if (old.length === 0 || old.length > MAX_STEP_NAME_LENGTH || hasControlCharacter(old))
      throw invalid(`workflow("${name}") renamed: old step name ${JSON.stringify(old)} is invalid`);
    if (steps.includes(old))
      throw invalid(
        `workflow("${name}") renamed: "${old}" is still a step of this workflow; list only names the code no longer has`,
      );
    if (typeof now !== "string" || !steps.includes(now))
      throw invalid(
        `workflow("${name}") renamed: "${old}" must map to one of its steps (${steps.join(", ")}), got ${JSON.stringify(now)}`,
      );
  }
  return Object.freeze(Object.fromEntries(entries) as Record<string, string>);
}

/**
 * The step of `definition` that answers for `step` as a run's log names it:
 * the step itself, or the one `renamed` maps it to; undefined when the code
 * has neither (the run is stranded at that step).
 */
export function stepNamed(definition: Pick<WorkflowDefinition, "steps" | "renamed">, step: string): string | undefined {
  if (Object.hasOwn(definition.steps, step)) return step;
  return Object.hasOwn(definition.renamed, step) ? definition.renamed[step] : undefined;
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
