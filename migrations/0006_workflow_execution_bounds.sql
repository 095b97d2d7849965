-- Bounded workflow execution (beyond the spec).
--
-- At most one `{ runId, scriptName }` queue message in flight per run: POST
-- /internal/workflow/execute sends only when it inserted the row; the queue
-- consumer deletes it when it is done with the message, or keeps it (counting
-- the continuation) when it re-enqueues a run whose step-loop budget ran out.
-- A row older than a few minutes is taken over, so a lost message cannot block
-- a run forever.
CREATE TABLE workflow_executions_in_flight (
  script_name TEXT NOT NULL,
  run_id TEXT NOT NULL,
  enqueued_at INTEGER NOT NULL,
  continuations INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (script_name, run_id)
);

-- Identity tokens already spent on POST /internal/workflow/execute, kept until
-- the token would have expired anyway (its signature is unique to the project,
-- second and request it signs).
CREATE TABLE spent_identity_tokens (
  signature TEXT PRIMARY KEY,
  expires_at INTEGER NOT NULL
);
CREATE INDEX spent_identity_tokens_by_expiry ON spent_identity_tokens (expires_at);
