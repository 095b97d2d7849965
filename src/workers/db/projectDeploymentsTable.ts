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

export interface LatestDeployment {
  durable_objects: string;
  migration_tag: string | null;
  /** The metadata the build reported, as JSON (the stranded-runs check reads its workflows). */
  metadata: string;
  /** How many uploads the project has had: the last one is version `v<count>`. */
  count: number;
}

/**
 * What the next upload needs from the last one: its Durable Object classes
 * (JSON array), migration tag and metadata (JSON), and the number of uploads
 * so far (each push is a version: `v1`, `v2`, … per project; rows are never
 * deleted, so the count only grows).
 */
export function findLatestDeployment(db: D1Database, projectId: number): Promise<LatestDeployment | null> {
  return db
    .prepare(
      `SELECT durable_objects, migration_tag, metadata, (SELECT count(*) FROM project_deployments WHERE project_id = ?1) AS count
       FROM project_deployments WHERE project_id = ?1 ORDER BY id DESC LIMIT 1`,
    )
    .bind(projectId)
    .first<LatestDeployment>();
}

/** A push's version name: `v1` for a project's first upload. */
export function versionAfter(latest: Pick<LatestDeployment, "count"> | null): string {
  return `v${(latest?.count ?? 0) + 1}`;
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
