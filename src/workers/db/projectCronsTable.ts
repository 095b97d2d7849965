import { UTC } from "../../core/cronSchedule.ts";
import { replaceProjectRowsStatements } from "./projectRows.ts";
import { touchProjectStatement, type ProjectRow } from "./projectsTable.ts";
import { allRows } from "./statementResults.ts";

/** `project_crons`: the crons a project's metadata declared, run by the API worker's every-minute trigger. */
export interface ProjectCron {
  name: string;
  schedule: string;
  /** The IANA zone `schedule` is read in; absent: UTC (the column's default). */
  timezone?: string;
}

/** A row as the API shows it: the zone only when it is not UTC. */
function toProjectCron(row: { name: string; schedule: string; timezone: string }): ProjectCron {
  return row.timezone === UTC
    ? { name: row.name, schedule: row.schedule }
    : { name: row.name, schedule: row.schedule, timezone: row.timezone };
}

/** Statements that replace a project's crons (and mark the project updated); run them in one batch with whatever else changes. */
export function replaceProjectCronsStatements(
  db: D1Database,
  projectId: number,
  crons: ProjectCron[],
): D1PreparedStatement[] {
  const rows = crons.map((c) => [c.name, c.schedule, c.timezone ?? UTC]);
  return [
    ...replaceProjectRowsStatements(db, {
      table: "project_crons",
      projectId,
      columns: ["name", "schedule", "timezone"],
      rows,
    }),
    touchProjectStatement(db, projectId, Date.now()),
  ];
}

export async function listProjectCrons(db: D1Database, projectId: number): Promise<ProjectCron[]> {
  const rows = await allRows<{ name: string; schedule: string; timezone: string }>(
    db,
    "SELECT name, schedule, timezone FROM project_crons WHERE project_id = ? ORDER BY name",
    projectId,
  );
  return rows.map(toProjectCron);
}

export async function projectHasCron(db: D1Database, projectId: number, name: string): Promise<boolean> {
  return (
    (await db
      .prepare("SELECT 1 FROM project_crons WHERE project_id = ? AND name = ?")
      .bind(projectId, name)
      .first()) !== null
  );
}

/** A project's row with one of its crons beside its columns. */
export type ProjectCronRow = ProjectRow & { cron_name: string; cron_schedule: string; cron_timezone: string };

/** Every cron of every project, each with its project's row. */
export function listAllProjectCrons(db: D1Database): Promise<ProjectCronRow[]> {
  return allRows<ProjectCronRow>(
    db,
    "SELECT projects.*, project_crons.name AS cron_name, project_crons.schedule AS cron_schedule, project_crons.timezone AS cron_timezone FROM project_crons JOIN projects ON projects.id = project_crons.project_id",
  );
}
