/**
 * `project_auth`: a project's sign-in settings, written by the API worker
 * from the project's metadata and read by the login worker. No row: the
 * project does not use sign-in settings.
 */
export interface ProjectAuthSettings {
  /** Lower-cased; `null` = every account may sign in. */
  domains: string[] | null;
  sessionMaxAge: number;
}

/** Statements that replace (or, with `null`, remove) a project's sign-in settings; batch them with the rest. */
export function replaceProjectAuthStatements(
  db: D1Database,
  projectId: number,
  settings: ProjectAuthSettings | null,
): D1PreparedStatement[] {
  const remove = db.prepare("DELETE FROM project_auth WHERE project_id = ?").bind(projectId);
  if (!settings) return [remove];
  return [
    remove,
    db
      .prepare("INSERT INTO project_auth (project_id, domains, session_max_age, updated_at) VALUES (?, ?, ?, ?)")
      .bind(
        projectId,
        settings.domains === null ? null : JSON.stringify(settings.domains),
        settings.sessionMaxAge,
        Date.now(),
      ),
  ];
}

/** A project with its allowed sign-in domains as stored (a JSON array, or `null` when unset or without a row). */
export interface ProjectSignInRow {
  id: number;
  slug: string;
  private: number;
  worker_secret: string;
  domains: string | null;
}

export function findProjectSignInRow(db: D1Database, slug: string): Promise<ProjectSignInRow | null> {
  return db
    .prepare(
      "SELECT projects.id AS id, projects.slug AS slug, projects.private AS private, projects.worker_secret AS worker_secret, project_auth.domains AS domains FROM projects LEFT JOIN project_auth ON project_auth.project_id = projects.id WHERE projects.slug = ?",
    )
    .bind(slug)
    .first<ProjectSignInRow>();
}
