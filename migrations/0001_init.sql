-- Platform tables shared by the API worker, the gateway and the plugin workers.

CREATE TABLE users (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  email TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL
);

-- CLI tokens are stored as SHA-256 hashes: a leaked table grants nothing.
CREATE TABLE cli_tokens (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  token_hash TEXT NOT NULL UNIQUE,
  label TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  expires_at INTEGER
);

CREATE TABLE projects (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  slug TEXT NOT NULL UNIQUE,
  owner_id INTEGER NOT NULL REFERENCES users(id),
  -- 32 random bytes, hex; signs identity tokens and internal calls.
  worker_secret TEXT NOT NULL CHECK (length(worker_secret) = 64),
  script_name TEXT NOT NULL UNIQUE,
  private INTEGER NOT NULL DEFAULT 0 CHECK (private IN (0, 1)),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

-- Crons a project registered (found in its metadata at deploy time).
CREATE TABLE project_crons (
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  schedule TEXT NOT NULL,
  PRIMARY KEY (project_id, name)
);

-- One OAuth connection per plugin per project.
CREATE TABLE plugin_oauth_connections (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  plugin_id TEXT NOT NULL,
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  external_user_id TEXT NOT NULL,
  access_token TEXT NOT NULL,
  refresh_token TEXT,
  token_expires_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (plugin_id, project_id)
);

-- One external resource belongs to at most one project: the unique constraint
-- enforces it even when two installs race.
CREATE TABLE plugin_resources (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  plugin_id TEXT NOT NULL,
  resource_type TEXT NOT NULL CHECK (resource_type IN ('server', 'workspace')),
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  external_resource_id TEXT NOT NULL,
  display_name TEXT NOT NULL,
  metadata TEXT NOT NULL DEFAULT '{}',
  created_at INTEGER NOT NULL,
  UNIQUE (plugin_id, resource_type, external_resource_id)
);

CREATE INDEX plugin_resources_by_project ON plugin_resources (project_id);
