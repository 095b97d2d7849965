/** Reads of the `projects` table shared by the API worker, the gateway and plugin workers. */
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
