import { touchProjectStatement, type ProjectRow } from "./projectsTable.ts";

/** `project_crons`: the crons a project's metadata declared, run by the API worker's every-minute trigger. */
export interface ProjectCron {
  name: string;
  schedule: string;
}

/** Statements that replace a project's crons (and mark the project updated); run them in one batch with whatever else changes. */
export function replaceProjectCronsStatements(
  db: D1Database,
  projectId: number,
  crons: ProjectCron[],
): D1PreparedStatement[] {
  return [
    db.prepare("DELETE FROM project_crons WHERE project_id = ?").bind(projectId),
    ...crons.map((c) =>
      db
        .prepare("INSERT INTO project_crons (project_id, name, schedule) VALUES (?, ?, ?)")
        .bind(projectId, c.name, c.schedule),
    ),
    touchProjectStatement(db, projectId, Date.now()),
  ];
}

export async function listProjectCrons(db: D1Database, projectId: number): Promise<ProjectCron[]> {
  const { results } = await db
    .prepare("SELECT name, schedule FROM project_crons WHERE project_id = ? ORDER BY name")
    .bind(projectId)
    .all<ProjectCron>();
  return results;
}

export async function projectHasCron(db: D1Database, projectId: number, name: string): Promise<boolean> {
  return (
    (await db
      .prepare("SELECT 1 FROM project_crons WHERE project_id = ? AND name = ?")
      .bind(projectId, name)
      .first()) !== null
  );
}

/** Every cron of every project, each with its project's row. */
export async function listAllProjectCrons(
  db: D1Database,
): Promise<(ProjectRow & { cron_name: string; cron_schedule: string })[]> {
  const { results } = await db
    .prepare(
      "SELECT projects.*, project_crons.name AS cron_name, project_crons.schedule AS cron_schedule FROM project_crons JOIN projects ON projects.id = project_crons.project_id",
    )
    .all<ProjectRow & { cron_name: string; cron_schedule: string }>();
  return results;
}
