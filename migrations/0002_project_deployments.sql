-- Each upload of a project's bundle to the dispatch namespace, newest last.
-- `durable_objects` (JSON array of class names) and `migration_tag` let the
-- next upload declare only the Durable Object classes that are new.
CREATE TABLE project_deployments (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  bundle_bytes INTEGER NOT NULL,
  metadata TEXT NOT NULL,
  durable_objects TEXT NOT NULL DEFAULT '[]',
  migration_tag TEXT,
  deployed_at INTEGER NOT NULL
);

CREATE INDEX project_deployments_by_project ON project_deployments (project_id, id DESC);
