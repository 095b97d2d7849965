-- `platform login` (src/workers/api/cliLoginRoutes.ts, src/workers/login/cliSignIn*.ts):
-- one row per CLI sign-in. The CLI holds the poll token, the browser link
-- carries the code; only their SHA-256 are stored. The code is opened once by
-- a browser within 2 minutes (expires_at); the person then has the login
-- flow's 10 minutes to sign in and approve; the CLI redeems the approval once
-- for a new CLI token. Rows are purged an hour after they were created.
CREATE TABLE cli_logins (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  code_hash TEXT NOT NULL UNIQUE,
  poll_hash TEXT NOT NULL UNIQUE,
  -- What the CLI said its machine is called, shown on the approval page.
  client_host TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  -- Milliseconds: the code opens nothing after this.
  expires_at INTEGER NOT NULL,
  opened_at INTEGER,
  approved_email TEXT,
  denied_at INTEGER,
  redeemed_at INTEGER
);
CREATE INDEX cli_logins_by_creation ON cli_logins (created_at);
