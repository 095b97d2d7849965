-- A project's verified webhook endpoints (beyond the spec): `webhook(name, { verify, secret, start? })`
-- serves POST /__platform/webhooks/<name> on the project's origin. A push (and `platform dev`) replaces
-- the list from the build's metadata; `platform webhook list` reads it. `secret` is the name of the
-- project secret holding the signing key, never the key.
CREATE TABLE project_webhooks (
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  verify TEXT NOT NULL,
  secret TEXT NOT NULL,
  start TEXT,
  PRIMARY KEY (project_id, name)
);
