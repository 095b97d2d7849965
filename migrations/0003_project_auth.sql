-- A project's sign-in settings, from the `auth` entry of its metadata
-- (`auth.allow({ domains, sessionMaxAge })`), written by PUT
-- /projects/:slug/metadata and PUT /projects/:slug/deployment and read by the
-- login worker. No row: the project registered no settings.
CREATE TABLE project_auth (
  project_id INTEGER PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
  -- JSON array of lower-case email domains; NULL = every account may sign in.
  domains TEXT,
  -- Session duration in seconds.
  session_max_age INTEGER NOT NULL CHECK (session_max_age > 0),
  updated_at INTEGER NOT NULL
);
