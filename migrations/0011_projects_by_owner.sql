-- An account's projects, counted at every creation (the cap on projects per
-- account, MAX_PROJECTS_PER_ACCOUNT on the API worker) and listed by the CLI.
CREATE INDEX projects_by_owner ON projects (owner_id);
