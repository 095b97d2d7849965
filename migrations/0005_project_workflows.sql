-- The workflows a project registered (the `workflows` entry of its metadata),
-- written by PUT /projects/:slug/metadata and PUT /projects/:slug/deployment.
-- The console lists them so a developer can start one; runs themselves live in
-- the project's own Durable Objects, never here.
CREATE TABLE project_workflows (
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  -- JSON array of the step names, "start" first.
  steps TEXT NOT NULL,
  max_attempts INTEGER NOT NULL,
  step_timeout_ms INTEGER NOT NULL,
  PRIMARY KEY (project_id, name)
);
