import { PlatformError } from "../../core/errors.ts";

/** A workflow a project registered, as its metadata reports it (no code, only what the console shows). */
export interface ProjectWorkflow {
  name: string;
  steps: string[];
  maxAttempts: number;
  stepTimeoutMS: number;
}

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
  if (!Array.isArray(value) || value.length > MAX_WORKFLOWS) throw invalid(`workflows must be an array of at most ${MAX_WORKFLOWS} entries.`);
  const workflows = value.map((entry): ProjectWorkflow => {
    const { name, steps, maxAttempts, stepTimeoutMS } = (entry ?? {}) as Record<string, unknown>;
    if (typeof name !== "string" || !NAME.test(name)) throw invalid("Each workflow needs a name of 1–64 letters, digits, '.', '-' or '_'.");
    if (!Array.isArray(steps) || steps.length === 0 || steps.length > MAX_STEPS) {
      throw invalid(`Workflow "${name}" needs steps: an array of 1–${MAX_STEPS} step names.`);
    }
    if (!steps.every((s) => typeof s === "string" && s.length > 0 && s.length <= MAX_STEP_NAME_LENGTH)) {
      throw invalid(`Workflow "${name}" has an invalid step name (1–${MAX_STEP_NAME_LENGTH} characters).`);
    }
    if (!Number.isInteger(maxAttempts) || (maxAttempts as number) < 1) throw invalid(`Workflow "${name}" needs maxAttempts: a positive integer.`);
    if (!Number.isInteger(stepTimeoutMS) || (stepTimeoutMS as number) < 1) throw invalid(`Workflow "${name}" needs stepTimeoutMS: a positive integer.`);
    return { name, steps: steps as string[], maxAttempts: maxAttempts as number, stepTimeoutMS: stepTimeoutMS as number };
  });
  const duplicate = workflows.find((w, i) => workflows.findIndex((other) => other.name === w.name) !== i);
  if (duplicate) throw invalid(`Workflow names must be unique; "${duplicate.name}" appears twice.`);
  return workflows;
}

/** Statements that replace a project's registered workflows; batch them with the rest of its metadata. */
export function replaceProjectWorkflowsStatements(db: D1Database, projectId: number, workflows: ProjectWorkflow[]): D1PreparedStatement[] {
  return [
    db.prepare("DELETE FROM project_workflows WHERE project_id = ?").bind(projectId),
    ...workflows.map((w) =>
      db
        .prepare("INSERT INTO project_workflows (project_id, name, steps, max_attempts, step_timeout_ms) VALUES (?, ?, ?, ?, ?)")
        .bind(projectId, w.name, JSON.stringify(w.steps), w.maxAttempts, w.stepTimeoutMS),
    ),
  ];
}

export async function listProjectWorkflows(db: D1Database, projectId: number): Promise<ProjectWorkflow[]> {
  const { results } = await db
    .prepare("SELECT name, steps, max_attempts, step_timeout_ms FROM project_workflows WHERE project_id = ? ORDER BY name")
    .bind(projectId)
    .all<{ name: string; steps: string; max_attempts: number; step_timeout_ms: number }>();
  return results.map((r) => ({ name: r.name, steps: JSON.parse(r.steps) as string[], maxAttempts: r.max_attempts, stepTimeoutMS: r.step_timeout_ms }));
}
