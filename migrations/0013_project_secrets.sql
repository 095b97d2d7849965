-- A project's secrets (`platform secret put`, beyond the spec): bound into every upload of its
-- worker as secret_text bindings. Values are sealed (AES-256-GCM) under the API worker's
-- SECRETS_ENCRYPTION_KEY with the project id and the name as additional data, so a value copied
-- into another row does not open; no route ever answers one.
CREATE TABLE project_secrets (
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  sealed_value TEXT NOT NULL,
  -- Epoch ms of the last put.
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (project_id, name)
);
