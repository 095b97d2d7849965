/**
 * The tables that hold a list per project (`project_crons`,
 * `project_workflows`, `project_webhooks`): a deploy replaces the whole list, never edits it.
 */
export type ProjectListTable = "project_crons" | "project_workflows" | "project_webhooks";

/**
 * Statements that delete a project's rows from `table` and insert `rows` (each
 * the values of `columns`, in order); batch them with the rest of the deploy.
 * `table` and `columns` are names written in the calling module, never input.
 */
export interface ProjectRowsReplacement {
  table: ProjectListTable;
  projectId: number;
  columns: readonly string[];
  rows: readonly (readonly unknown[])[];
}

export function replaceProjectRowsStatements(
  db: D1Database,
  { table, projectId, columns, rows }: ProjectRowsReplacement,
): D1PreparedStatement[] {
  const insert = `INSERT INTO ${table} (project_id, ${columns.join(", ")}) VALUES (?${", ?".repeat(columns.length)})`;
  return [
    db.prepare(`DELETE FROM ${table} WHERE project_id = ?`).bind(projectId),
    ...rows.map((values) => db.prepare(insert).bind(projectId, ...values)),
  ];
}
