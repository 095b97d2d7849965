-- Plugin connection health and the chat-server plugin's deployed manifests (beyond the spec's columns).

-- The provider's last refusal of a connection's token (401/403, invalid_auth,
-- token_revoked) on a proxy call: the connection "needs reconnect" until a
-- call succeeds or the plugin is reinstalled, which clear both columns.
ALTER TABLE plugin_oauth_connections ADD COLUMN last_error TEXT;
ALTER TABLE plugin_oauth_connections ADD COLUMN last_error_at INTEGER;

-- Each project's last deployed plugin metadata (the chat-server plugin's
-- commands), so a server installed after the deploy gets the commands at once.
CREATE TABLE plugin_deployed_manifests (
  plugin_id TEXT NOT NULL,
  project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  manifest TEXT NOT NULL,
  deployed_at INTEGER NOT NULL,
  PRIMARY KEY (plugin_id, project_id)
);
