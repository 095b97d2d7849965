-- Sign-in sessions (src/contracts/signInSessions.ts): a project worker records
-- every session it mints, and a session cookie reads as somebody only while
-- its row is here and unexpired. Sign-out deletes its session's row,
-- auth.signOutEverywhere every row of the user; expired rows are purged as
-- new sessions start.
CREATE TABLE project_sessions (
  project_id INTEGER NOT NULL,
  -- The session's random id (16 bytes, base64url), from inside the sealed cookie.
  sid TEXT NOT NULL,
  -- SHA-256 (hex) of the user's lower-cased address; the address itself is not kept.
  user_key TEXT NOT NULL,
  -- Unix seconds: the session's exp.
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (project_id, sid)
);
CREATE INDEX project_sessions_by_user ON project_sessions (project_id, user_key);
CREATE INDEX project_sessions_by_expiry ON project_sessions (expires_at);
