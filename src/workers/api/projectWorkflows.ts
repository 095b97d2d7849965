import { parseWorkflowShapes } from "../../contracts/workflowShapes.ts";
import { PlatformError } from "../../core/errors.ts";
import type { ProjectWorkflow } from "../db/projectWorkflowsTable.ts";

/** The engine's bounds on retention (src/engine/api/definition.ts): 1 s to 365 days. */
const MIN_RETENTION_MS = 1000;
const MAX_RETENTION_MS = 365 * 24 * 60 * 60 * 1000;

function invalid(message: string): PlatformError {
  return new PlatformError("invalid_input", message);
}

/** A deployment's `metadata.workflows`: names, steps and renamed (the stranded-runs check reads them), and their options. */
export function validateMetadataWorkflows(value: unknown): ProjectWorkflow[] {
  const shapes = parseWorkflowShapes(value);
  return shapes.map((shape, i): ProjectWorkflow => {
    const { maxAttempts, stepTimeoutMS, retentionMS } = ((value as unknown[])[i] ?? {}) as Record<string, unknown>;
    const { name } = shape;
    if (!Number.isInteger(maxAttempts) || (maxAttempts as number) < 1)
      throw invalid(`Workflow "${name}" needs maxAttempts: a positive integer.`);
    if (!Number.isInteger(stepTimeoutMS) || (stepTimeoutMS as number) < 1)
      throw invalid(`Workflow "${name}" needs stepTimeoutMS: a positive integer.`);
    if (
      retentionMS !== undefined &&
      (!Number.isInteger(retentionMS) ||
        (retentionMS as number) < MIN_RETENTION_MS ||
        (retentionMS as number) > MAX_RETENTION_MS)
    )
      throw invalid(
        `Workflow "${name}" retentionMS must be an integer from ${MIN_RETENTION_MS} to ${MAX_RETENTION_MS}.`,
      );
    return {
      ...shape,
      maxAttempts: maxAttempts as number,
      stepTimeoutMS: stepTimeoutMS as number,
      ...(retentionMS === undefined ? {} : { retentionMS: retentionMS as number }),
    };
  });
}
