/**
 * `plugin_event_dedupe`. Providers retry events (Slack until acked, with `X-Slack-Retry-Num`), so a
 * plugin claims each event id before delivering it: the first claim wins,
 * retries see `false`. If delivery then fails, `releaseEvent` lets the next
 * retry through. Claims older than `EVENT_DEDUPE_TTL_MS` are purged as new
 * events arrive.
 */
export const EVENT_DEDUPE_TTL_MS = 24 * 60 * 60 * 1000;

/** True for the first delivery of (pluginId, eventId) within the TTL; false for a repeat. */
export async function claimEvent(
  db: D1Database,
  pluginId: string,
  eventId: string,
  now = Date.now(),
): Promise<boolean> {
  const [, inserted] = await db.batch([
    db.prepare("DELETE FROM plugin_event_dedupe WHERE received_at < ?").bind(now - EVENT_DEDUPE_TTL_MS),
    db
      .prepare(
        "INSERT INTO plugin_event_dedupe (plugin_id, event_id, received_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING RETURNING event_id",
      )
      .bind(pluginId, eventId, now),
  ]);
  return (inserted?.results.length ?? 0) > 0;
}

/** Forgets a claim (the delivery failed), so the provider's retry is delivered. */
export async function releaseEvent(db: D1Database, pluginId: string, eventId: string): Promise<void> {
  await db
    .prepare("DELETE FROM plugin_event_dedupe WHERE plugin_id = ? AND event_id = ?")
    .bind(pluginId, eventId)
    .run();
}
