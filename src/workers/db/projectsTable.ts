import { allRows } from "./statementResults.ts";

/** The `projects` table: read by the API worker, the gateway, the login and plugin workers; written by the API worker. */
export interface ProjectRow {
  id: number;
  slug: string;
  owner_id: number;
  worker_secret: string;
  script_name: string;
  private: number;
  created_at: number;
  updated_at: number;
}

/** What any caller outside the platform may see of a project: never the worker secret. */
export interface PublicProject {
  id: number;
  slug: string;
  scriptName: string;
  private: boolean;
  createdAt: string;
  updatedAt: string;
}

export function toPublicProject(row: ProjectRow): PublicProject {
  return {
    id: row.id,
    slug: row.slug,
    scriptName: row.script_name,
    private: row.private === 1,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

export function findProjectBySlug(db: D1Database, slug: string): Promise<ProjectRow | null> {
  return db.prepare("SELECT * FROM projects WHERE slug = ?").bind(slug).first<ProjectRow>();
}

export function findProjectById(db: D1Database, id: number | string): Promise<ProjectRow | null> {
  return db.prepare("SELECT * FROM projects WHERE id = ?").bind(Number(id)).first<ProjectRow>();
}

export function findProjectByScriptName(db: D1Database, scriptName: string): Promise<ProjectRow | null> {
  return db.prepare("SELECT * FROM projects WHERE script_name = ?").bind(scriptName).first<ProjectRow>();
}

export interface NewProject {
  slug: string;
  ownerId: number;
  workerSecret: string;
  scriptName: string;
  private: boolean;
  now: number;
}

/**
 * Inserts the project while its owner has fewer than `maxProjects`, in one
 * statement (two concurrent creations cannot both pass the count); `null`
 * when the slug is taken or the owner is at the cap (the caller tells which).
 */
export function insertProject(db: D1Database, project: NewProject, maxProjects: number): Promise<ProjectRow | null> {
  return db
    .prepare(
      "INSERT INTO projects (slug, owner_id, worker_secret, script_name, private, created_at, updated_at) SELECT ?, ?, ?, ?, ?, ?, ? WHERE (SELECT COUNT(*) FROM projects WHERE owner_id = ?) < ? ON CONFLICT DO NOTHING RETURNING *",
    )
    .bind(
      project.slug,
      project.ownerId,
      project.workerSecret,
      project.scriptName,
      project.private ? 1 : 0,
      project.now,
      project.now,
      project.ownerId,
      maxProjects,
    )
    .first<ProjectRow>();
}

export async function countProjectsOwnedBy(db: D1Database, ownerId: number): Promise<number> {
  const row = await db
    .prepare("SELECT COUNT(*) AS n FROM projects WHERE owner_id = ?")
    .bind(ownerId)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

export function listProjectsOwnedBy(db: D1Database, ownerId: number): Promise<ProjectRow[]> {
  return allRows<ProjectRow>(db, "SELECT * FROM projects WHERE owner_id = ? ORDER BY slug", ownerId);
}

/** Marks the project changed; batch it with the change. */
export function touchProjectStatement(db: D1Database, projectId: number, now: number): D1PreparedStatement {
  return db.prepare("UPDATE projects SET updated_at = ? WHERE id = ?").bind(now, projectId);
}
