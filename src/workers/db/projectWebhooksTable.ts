import { replaceProjectRowsStatements } from "./projectRows.ts";
import { allRows } from "./statementResults.ts";

/** `project_webhooks`: a verified webhook endpoint a project registered, as its metadata reports it. */
export interface ProjectWebhook {
  name: string;
  verify: string;
  /** The name of the project secret holding the signing key. */
  secret: string;
  /** The workflow each delivery starts; absent when the project's `route` decides. */
  start?: string;
}

/** Statements that replace a project's webhook endpoints; batch them with the rest of its metadata. */
export function replaceProjectWebhooksStatements(
  db: D1Database,
  projectId: number,
  webhooks: ProjectWebhook[],
): D1PreparedStatement[] {
  return replaceProjectRowsStatements(db, {
    table: "project_webhooks",
    projectId,
    columns: ["name", "verify", "secret", "start"],
    rows: webhooks.map((w) => [w.name, w.verify, w.secret, w.start ?? null]),
  });
}

export async function listProjectWebhooks(db: D1Database, projectId: number): Promise<ProjectWebhook[]> {
  const rows = await allRows<{ name: string; verify: string; secret: string; start: string | null }>(
    db,
    "SELECT name, verify, secret, start FROM project_webhooks WHERE project_id = ? ORDER BY name",
    projectId,
  );
  return rows.map(({ start, ...rest }) => (start === null ? rest : { ...rest, start }));
}
