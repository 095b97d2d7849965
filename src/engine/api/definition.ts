import { PlatformError } from "../../core/errors.ts";
import { refuseUnknownKeys } from "../../core/unknownKeys.ts";
import type { BackoffOptions } from "../execution/backoff.ts";
import type { StoredEvent } from "../execution/events.ts";
import { type FlowControl, type FlowControlOptions, toFlowControl } from "../flow/flowControl.ts";
import type { RollbackFunction } from "../execution/rollbackContext.ts";
import type { StepFunction } from "../execution/stepContext.ts";
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
 * - `nonRetryableErrors`: at most 100 error names.
 */
export const WORKFLOW_LIMITS = Object.freeze({
  maxAttempts: 100,
  backoffMS: 86_400_000,
  stepTimeoutMS: 900_000,
  minRetentionMS: 1000,
  maxRetentionMS: 365 * 24 * 60 * 60 * 1000,
  renamedSteps: 1000,
  nonRetryableErrors: 100,
});

/** Every option `workflow(name, steps, options)` takes: any other key is refused as a typo. */
const WORKFLOW_OPTION_KEYS = [
  "schedule",
  "maxAttempts",
  "backoff",
  "stepTimeoutMS",
  "stepOptions",
  "nonRetryableErrors",
  "renamed",
  "retentionMS",
  "concurrency",
  "throttle",
  "debounce",
  "rollback",
  "rollbackOptions",
  "rollbackOnCancel",
] as const satisfies readonly (keyof WorkflowOptions)[];
const STEP_OPTION_KEYS = ["maxAttempts", "backoff", "stepTimeoutMS"] as const satisfies readonly (keyof StepOptions)[];
const BACKOFF_KEYS = ["initialMS", "factor", "maxMS", "jitter"] as const satisfies readonly (keyof BackoffOptions)[];

/** The first step of every workflow. */
export const FIRST_STEP = "start";

/** Attempts, backoff and timeout: a workflow's for all its steps, or one step's (`stepOptions`). */
export interface StepOptions {
  maxAttempts?: number;
  backoff?: Partial<BackoffOptions>;
  stepTimeoutMS?: number;
}

/** A step's attempts, backoff and timeout, after defaults and overrides. */
export interface StepPolicy {
  readonly maxAttempts: number;
  readonly backoff: Readonly<BackoffOptions>;
  readonly stepTimeoutMS: number;
}

export interface WorkflowOptions extends FlowControlOptions, StepOptions {
  /** Start one run per tick (workflowSchedule.ts). */
  schedule?: WorkflowScheduleOption;
  /** Per-step overrides of `maxAttempts`, `backoff` and `stepTimeoutMS`, by step name. */
  stepOptions?: Record<string, StepOptions>;
  /** Names of errors (`error.name`) that fail the run at once, as `NonRetryableError` does. */
  nonRetryableErrors?: string[];
  /**
   * Old step names this code still answers for, `{ oldStep: "newStep" }`. A live run
   * whose log names `oldStep` (it is in it, will retry it, or will claim it next) goes on with `newStep`;
   * a push that would strand such a run is refused unless the old name is kept here.
   */
  renamed?: Record<string, string>;
  /** How long a finished run is kept before it is deleted; default 30 days, 1 s to 365 days. */
  retentionMS?: number;
  /**
   * Undo handlers by step name: when the run fails for good, the handlers of its completed steps run
   * in reverse order of completion, each a durable step of its own (rollback.ts).
   */
  rollback?: Record<string, RollbackFunction>;
  /** Attempts, backoff and timeout of each rollback handler; default: the workflow's. */
  rollbackOptions?: StepOptions;
  /** A cancel rolls back the run's completed steps too before it ends the run (default: false). */
  rollbackOnCancel?: boolean;
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
  /** The steps whose policy differs from the workflow's, each whole (read through {@link stepPolicy}). */
  readonly stepOptions: Readonly<Record<string, StepPolicy>>;
  /** Error names that fail the run at once (empty when none). */
  readonly nonRetryableErrors: readonly string[];
  /** Old step names and the steps that answer for them (empty when none). */
  readonly renamed: Readonly<Record<string, string>>;
  readonly retentionMS: number;
  /** Undo handlers by step name (empty when none). */
  readonly rollback: Readonly<Record<string, RollbackFunction>>;
  /** The attempts, backoff and timeout each rollback handler runs with. */
  readonly rollbackPolicy: StepPolicy;
  readonly rollbackOnCancel: boolean;
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
  if (typeof options !== "object" || options === null || Array.isArray(options))
    throw invalid(`workflow("${name}") options must be an object, e.g. { maxAttempts: 3 }`);
  refuseUnknownKeys(options, WORKFLOW_OPTION_KEYS, `workflow("${name}") options`);
  const schedule = toWorkflowSchedule(name, options.schedule);
  const flow = toFlowControl(name, options);
  const policy = stepPolicyOf(`workflow("${name}")`, options, {
    maxAttempts: WORKFLOW_DEFAULTS.maxAttempts,
    backoff: WORKFLOW_DEFAULTS.backoff,
    stepTimeoutMS: WORKFLOW_DEFAULTS.stepTimeoutMS,
  });
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
    ...policy,
    stepOptions: checkStepOptions(name, names, options.stepOptions, policy),
    nonRetryableErrors: checkNonRetryableErrors(name, options.nonRetryableErrors),
    renamed: checkRenamed(name, names, options.renamed),
    retentionMS,
    rollback: checkRollback(name, names, options.rollback),
    rollbackOnCancel: checkRollbackOnCancel(name, options.rollbackOnCancel),
    rollbackPolicy: Object.freeze(
      stepPolicyOf(`workflow("${name}") rollbackOptions`, checkRollbackOptions(name, options.rollbackOptions), policy),
    ),
  });
}

/**
 * The attempts, backoff and timeout of one step: the options at `where` over `inherited` (a step's
 * over its workflow's, the workflow's over the engine defaults); throws `invalid_input` naming the
 * option, its bounds and the value.
 */
function stepPolicyOf(where: string, options: StepOptions, inherited: StepPolicy): StepPolicy {
  const maxAttempts = options.maxAttempts ?? inherited.maxAttempts;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > WORKFLOW_LIMITS.maxAttempts) {
    throw invalid(
      `${where} maxAttempts must be an integer from 1 to ${WORKFLOW_LIMITS.maxAttempts} (attempts include the first), got ${maxAttempts}`,
    );
  }
  const stepTimeoutMS = options.stepTimeoutMS ?? inherited.stepTimeoutMS;
  if (!isPositiveFinite(stepTimeoutMS))
    throw invalid(`${where} stepTimeoutMS must be a positive number of milliseconds, got ${stepTimeoutMS}`);
  if (stepTimeoutMS > WORKFLOW_LIMITS.stepTimeoutMS) {
    throw invalid(
      `${where} stepTimeoutMS must be at most ${WORKFLOW_LIMITS.stepTimeoutMS} (15 minutes), got ${stepTimeoutMS}`,
    );
  }
  if (options.backoff !== undefined && (typeof options.backoff !== "object" || options.backoff === null))
    throw invalid(`${where} backoff must be an object, e.g. { initialMS: 1000, factor: 2, maxMS: 60000 }`);
  refuseUnknownKeys(options.backoff ?? {}, BACKOFF_KEYS, `${where} backoff`);
  const backoff = { ...inherited.backoff, ...definedOnly(options.backoff ?? {}) };
  if (!(Number.isFinite(backoff.initialMS) && backoff.initialMS >= 0))
    throw invalid(`${where} backoff.initialMS must be >= 0, got ${backoff.initialMS}`);
  if (backoff.initialMS > WORKFLOW_LIMITS.backoffMS) {
    throw invalid(
      `${where} backoff.initialMS must be at most ${WORKFLOW_LIMITS.backoffMS} (24 hours), got ${backoff.initialMS}`,
    );
  }
  if (!(Number.isFinite(backoff.factor) && backoff.factor >= 1))
    throw invalid(`${where} backoff.factor must be >= 1, got ${backoff.factor}`);
  if (!(Number.isFinite(backoff.maxMS) && backoff.maxMS >= backoff.initialMS)) {
    throw invalid(`${where} backoff.maxMS must be >= backoff.initialMS (${backoff.initialMS}), got ${backoff.maxMS}`);
  }
  if (backoff.maxMS > WORKFLOW_LIMITS.backoffMS) {
    throw invalid(
      `${where} backoff.maxMS must be at most ${WORKFLOW_LIMITS.backoffMS} (24 hours), got ${backoff.maxMS}`,
    );
  }
  if (!(Number.isFinite(backoff.jitter) && backoff.jitter >= 0 && backoff.jitter <= 1)) {
    throw invalid(`${where} backoff.jitter must be between 0 and 1, got ${backoff.jitter}`);
  }
  return { maxAttempts, backoff: Object.freeze(backoff), stepTimeoutMS };
}

/** `stepOptions: { charge: { maxAttempts: 5 } }`: each names a step, each over the workflow's own policy. */
function checkStepOptions(
  name: string,
  steps: string[],
  stepOptions: unknown,
  workflowPolicy: StepPolicy,
): Readonly<Record<string, StepPolicy>> {
  if (stepOptions === undefined) return Object.freeze({});
  if (typeof stepOptions !== "object" || stepOptions === null || Array.isArray(stepOptions))
    throw invalid(`workflow("${name}") stepOptions must be an object like { charge: { maxAttempts: 5 } }`);
  refuseUnknownKeys(stepOptions, steps, `workflow("${name}") stepOptions`);
  const policies: Record<string, StepPolicy> = {};
  for (const [step, options] of Object.entries(stepOptions as Record<string, unknown>)) {
    const where = `workflow("${name}") stepOptions.${step}`;
    if (typeof options !== "object" || options === null || Array.isArray(options))
      throw invalid(`${where} must be an object like { maxAttempts: 5, stepTimeoutMS: 60000 }`);
    refuseUnknownKeys(options, STEP_OPTION_KEYS, where);
    policies[step] = Object.freeze(stepPolicyOf(where, options, workflowPolicy));
  }
  return Object.freeze(policies);
}

/** `rollback: { charge: async (ctx) => … }`: each key a step of the workflow, each value a function. */
function checkRollback(name: string, steps: string[], rollback: unknown): Readonly<Record<string, RollbackFunction>> {
  if (rollback === undefined) return Object.freeze({});
  if (typeof rollback !== "object" || rollback === null || Array.isArray(rollback))
    throw invalid(`workflow("${name}") rollback must be an object like { charge: async (ctx) => { /* refund */ } }`);
  refuseUnknownKeys(rollback, steps, `workflow("${name}") rollback`);
  for (const [step, handler] of Object.entries(rollback as Record<string, unknown>))
    if (typeof handler !== "function")
      throw invalid(`workflow("${name}") rollback.${step} must be a function that undoes step "${step}"`);
  return Object.freeze({ ...(rollback as Record<string, RollbackFunction>) });
}

function checkRollbackOnCancel(name: string, value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value !== "boolean") throw invalid(`workflow("${name}") rollbackOnCancel must be true or false`);
  return value;
}

function checkRollbackOptions(name: string, options: unknown): StepOptions {
  if (options === undefined) return {};
  if (typeof options !== "object" || options === null || Array.isArray(options))
    throw invalid(
      `workflow("${name}") rollbackOptions must be an object like { maxAttempts: 5, stepTimeoutMS: 60000 }`,
    );
  refuseUnknownKeys(options, STEP_OPTION_KEYS, `workflow("${name}") rollbackOptions`);
  return options as StepOptions;
}

/** `nonRetryableErrors: ["CardDeclinedError"]`: error names (`error.name`) that fail a run at once. */
function checkNonRetryableErrors(name: string, names: unknown): readonly string[] {
  if (names === undefined) return Object.freeze([]);
  const where = `workflow("${name}") nonRetryableErrors`;
  if (!Array.isArray(names) || names.length > WORKFLOW_LIMITS.nonRetryableErrors)
    throw invalid(`${where} must be an array of at most ${WORKFLOW_LIMITS.nonRetryableErrors} error names`);
  for (const errorName of names) {
    if (typeof errorName === "function")
      throw invalid(`${where} takes error names, not classes: write ${JSON.stringify(errorName.name)}`);
    if (typeof errorName !== "string" || errorName.length === 0 || errorName.length > 256)
      throw invalid(`${where}: ${JSON.stringify(errorName)} is not an error name such as "CardDeclinedError"`);
  }
  return Object.freeze([...names]);
}

/**
 * The attempts, backoff and timeout `step` (as a run's log names it, so an old name reads its new
 * one's) runs with: its `stepOptions` entry, else the workflow's.
 */
export function stepPolicy(
  definition: StepPolicy & Pick<WorkflowDefinition, "stepOptions" | "steps" | "renamed">,
  step: string,
): StepPolicy {
  const current = stepNamed(definition, step) ?? step;
  return (Object.hasOwn(definition.stepOptions, current) ? definition.stepOptions[current] : undefined) ?? definition;
}

/** The `maxAttempts` the resolver weighs after `state`: a failed step's own, a failed rollback's (only those two read it). */
export function attemptsAllowedAfter(definition: WorkflowDefinition, state: StoredEvent): number {
  if (state.type === "rollback_failed") return definition.rollbackPolicy.maxAttempts;
  return state.type === "step_failed" ? stepPolicy(definition, state.payload.step).maxAttempts : definition.maxAttempts;
}

/** Whether a thrown error fails its run at once by its name (`nonRetryableErrors`). */
export function isNamedNonRetryable(
  definition: Pick<WorkflowDefinition, "nonRetryableErrors">,
  error: unknown,
): boolean {
  return error instanceof Error && definition.nonRetryableErrors.includes(error.name);
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
