import { PlatformError } from "../../core/errors.ts";
import type { ProjectWorkflow } from "../db/projectWorkflowsTable.ts";

const MAX_WORKFLOWS = 100;
const MAX_STEPS = 1000;
// The engine's own rules for names (src/engine/definition.ts); a build cannot register anything else.
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const MAX_STEP_NAME_LENGTH = 256;

function invalid(message: string): PlatformError {
  return new PlatformError("invalid_input", message);
}

export function validateMetadataWorkflows(value: unknown): ProjectWorkflow[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > MAX_WORKFLOWS)
    throw invalid(`workflows must be an array of at most ${MAX_WORKFLOWS} entries.`);
  const workflows = value.map((entry): ProjectWorkflow => {
    const { name, steps, maxAttempts, stepTimeoutMS } = (entry ?? {}) as Record<string, unknown>;
    if (typeof name !== "string" || !NAME.test(name))
      throw invalid("Each workflow needs a name of 1–64 letters, digits, '.', '-' or '_'.");
    if (!Array.isArray(steps) || steps.length === 0 || steps.length > MAX_STEPS) {
      throw invalid(`Workflow "${name}" needs steps: an array of 1–${MAX_STEPS} step names.`);
    }
    if (!steps.every((s) => typeof s === "string" && s.length > 0 && s.length <= MAX_STEP_NAME_LENGTH)) {
      throw invalid(`Workflow "${name}" has an invalid step name (1–${MAX_STEP_NAME_LENGTH} characters).`);
    }
    if (!Number.isInteger(maxAttempts) || (maxAttempts as number) < 1)
      throw invalid(`Workflow "${name}" needs maxAttempts: a positive integer.`);
    if (!Number.isInteger(stepTimeoutMS) || (stepTimeoutMS as number) < 1)
      throw invalid(`Workflow "${name}" needs stepTimeoutMS: a positive integer.`);
    return {
      name,
      steps: steps as string[],
      maxAttempts: maxAttempts as number,
      stepTimeoutMS: stepTimeoutMS as number,
    };
  });
  const duplicate = workflows.find((w, i) => workflows.findIndex((other) => other.name === w.name) !== i);
  if (duplicate) throw invalid(`Workflow names must be unique; "${duplicate.name}" appears twice.`);
  return workflows;
}
