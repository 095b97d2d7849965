-- A plugin's own trouble that no one connection caused (beyond the spec's columns): the chat-server
-- bot's Gateway relay refused (disallowed intents, a refused bot token) or waiting for its session
-- starts to reset. The bot is shared, so every project's connection of that plugin shows it (as
-- health `degraded`, with the cause and the fix) until the relay is READY again. One row per
-- source (a relay shard); `since` is when this problem (its code) began.
CREATE TABLE plugin_problems (
  plugin_id TEXT NOT NULL,
  source TEXT NOT NULL,
  code TEXT NOT NULL,
  cause TEXT NOT NULL,
  fix TEXT NOT NULL,
  since INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (plugin_id, source)
);
