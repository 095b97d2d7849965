/** `project_deployments`: one row per upload of a project's bundle, newest last. */
export interface NewProjectDeployment {
  projectId: number;
  bundleBytes: number;
  /** The metadata the build reported, as JSON. */
  metadata: string;
  /** The Durable Object classes the bundle declared, as a JSON array. */
  durableObjects: string;
  migrationTag: string | null;
  deployedAt: number;
}

/** What the next upload needs from the last one: its Durable Object classes (JSON array), migration tag and metadata (JSON). */
export function findLatestDeployment(
  db: D1Database,
  projectId: number,
): Promise<{ durable_objects: string; migration_tag: string | null; metadata: string } | null> {
  return db
    .prepare(
      "SELECT durable_objects, migration_tag, metadata FROM project_deployments WHERE project_id = ? ORDER BY id DESC LIMIT 1",
    )
    .bind(projectId)
    .first<{ durable_objects: string; migration_tag: string | null; metadata: string }>();
}

export function insertDeploymentStatement(db: D1Database, deployment: NewProjectDeployment): D1PreparedStatement {
  return db
    .prepare(
      "INSERT INTO project_deployments (project_id, bundle_bytes, metadata, durable_objects, migration_tag, deployed_at) VALUES (?, ?, ?, ?, ?, ?)",
    )
    .bind(
      deployment.projectId,
      deployment.bundleBytes,
      deployment.metadata,
      deployment.durableObjects,
      deployment.migrationTag,
      deployment.deployedAt,
    );
}
