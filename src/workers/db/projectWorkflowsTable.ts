import { replaceProjectRowsStatements } from "./projectRows.ts";
import { allRows } from "./statementResults.ts";

/** `project_workflows`: a workflow a project registered, as its metadata reports it (no code, only what the console shows). */
export interface ProjectWorkflow {
  name: string;
  steps: string[];
  maxAttempts: number;
  stepTimeoutMS: number;
}

/** Statements that replace a project's registered workflows; batch them with the rest of its metadata. */
export function replaceProjectWorkflowsStatements(
  db: D1Database,
  projectId: number,
  workflows: ProjectWorkflow[],
): D1PreparedStatement[] {
  return replaceProjectRowsStatements(db, {
    table: "project_workflows",
    projectId,
    columns: ["name", "steps", "max_attempts", "step_timeout_ms"],
    rows: workflows.map((w) => [w.name, JSON.stringify(w.steps), w.maxAttempts, w.stepTimeoutMS]),
  });
}

export async function listProjectWorkflows(db: D1Database, projectId: number): Promise<ProjectWorkflow[]> {
  const rows = await allRows<{ name: string; steps: string; max_attempts: number; step_timeout_ms: number }>(
    db,
    "SELECT name, steps, max_attempts, step_timeout_ms FROM project_workflows WHERE project_id = ? ORDER BY name",
    projectId,
  );
  return rows.map((r) => ({
    name: r.name,
    steps: JSON.parse(r.steps) as string[],
    maxAttempts: r.max_attempts,
    stepTimeoutMS: r.step_timeout_ms,
  }));
}
