-- Callback tokens (src/core/callbackToken.ts) already redeemed, so each signs
-- a browser in at most once: POST /internal/auth/redeem inserts the token's
-- jti for the calling project and answers 409 when it was there. A row lives
-- until its token expires (plus clock skew); expired rows are purged as new
-- tokens are redeemed.
CREATE TABLE redeemed_callback_tokens (
  project_id INTEGER NOT NULL,
  jti TEXT NOT NULL,
  -- Unix seconds: the token's exp.
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (project_id, jti)
);
CREATE INDEX redeemed_callback_tokens_by_expiry ON redeemed_callback_tokens (expires_at);
