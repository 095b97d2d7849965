-- Plugin connection state beyond the spec's columns.

-- A connection the provider revoked (uninstall, token revoked) is kept for the
-- record and marked; a reinstall replaces it and clears the mark.
ALTER TABLE plugin_oauth_connections ADD COLUMN revoked_at INTEGER;

-- Provider events already delivered to a project: providers retry (Slack
-- resends an event until it is acknowledged), and a retried event must reach
-- the project once. Rows older than a day are purged as new events arrive.
CREATE TABLE plugin_event_dedupe (
  plugin_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  PRIMARY KEY (plugin_id, event_id)
);

CREATE INDEX plugin_event_dedupe_by_age ON plugin_event_dedupe (received_at);
