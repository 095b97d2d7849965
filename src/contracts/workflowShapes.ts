import { PlatformError } from "../core/errors.ts";

/**
 * A project's workflows as its build's metadata lists them, as far as the
 * stranded-runs check needs: names, step names and the old step names each still
 * answers for (`renamed`). The API worker checks a deployment's metadata with
 * this, and the project's runtime checks the stranded-runs check's body with it.
 */
export interface WorkflowShape {
  name: string;
  steps: string[];
  /** `{ oldStep: "newStep" }`: old names a live run may still name. */
  renamed?: Record<string, string>;
}

export const MAX_WORKFLOWS = 100;
export const MAX_STEPS = 1000;
// The engine's own rules for names (src/engine/api/definition.ts); a build cannot register anything else.
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const MAX_STEP_NAME_LENGTH = 256;

function invalid(message: string): PlatformError {
  return new PlatformError("invalid_input", message);
}

function isStepName(value: unknown): value is string {
  return typeof value === "string" && value.length > 0 && value.length <= MAX_STEP_NAME_LENGTH;
}

/** One workflow's name, steps and renamed, checked; throws `invalid_input` naming what is wrong. */
export function parseWorkflowShape(entry: unknown): WorkflowShape {
  const { name, steps, renamed } = (entry ?? {}) as Record<string, unknown>;
  if (typeof name !== "string" || !NAME.test(name))
    throw invalid("Each workflow needs a name of 1–64 letters, digits, '.', '-' or '_'.");
  if (!Array.isArray(steps) || steps.length === 0 || steps.length > MAX_STEPS)
    throw invalid(`Workflow "${name}" needs steps: an array of 1–${MAX_STEPS} step names.`);
  if (!steps.every(isStepName))
    throw invalid(`Workflow "${name}" has an invalid step name (1–${MAX_STEP_NAME_LENGTH} characters).`);
  if (renamed === undefined) return { name, steps };
  if (typeof renamed !== "object" || renamed === null || Array.isArray(renamed))
    throw invalid(`Workflow "${name}" renamed must be an object of old step names to steps.`);
  const entries = Object.entries(renamed as Record<string, unknown>);
  if (entries.length > MAX_STEPS) throw invalid(`Workflow "${name}" renamed may name at most ${MAX_STEPS} old steps.`);
  for (const [old, step] of entries) {
    if (!isStepName(old) || !isStepName(step) || !steps.includes(step))
      throw invalid(`Workflow "${name}" renamed "${old}" must map to one of its steps.`);
  }
  return { name, steps, renamed: Object.fromEntries(entries) as Record<string, string> };
}

/** A list of workflows (at most {@link MAX_WORKFLOWS}, names unique). */
export function parseWorkflowShapes(value: unknown): WorkflowShape[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > MAX_WORKFLOWS)
    throw invalid(`workflows must be an array of at most ${MAX_WORKFLOWS} entries.`);
  const workflows = value.map(parseWorkflowShape);
  const duplicate = workflows.find((w, i) => workflows.findIndex((other) => other.name === w.name) !== i);
  if (duplicate) throw invalid(`Workflow names must be unique; "${duplicate.name}" appears twice.`);
  return workflows;
}

/** A live run a new version would strand: the stranded-runs check's answer lists these. */
export interface StrandedRun {
  runId: string;
  workflow: string;
  step: string;
  /** Live runs only: running (a queued run too), waiting for its children, or paused. */
  status: "running" | "waiting" | "paused";
  /** Whether the new code lacks the whole workflow, or only that step. */
  missing: "workflow" | "step";
}

export interface StrandedRuns {
  /** How many live runs the new code would strand. */
  count: number;
  /** The newest of them, at most 20. */
  runs: StrandedRun[];
}
