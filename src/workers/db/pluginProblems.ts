/**
 * `plugin_problems`: trouble of a plugin as a whole, reported by a part of it
 * (`source`, e.g. the chat-server relay's shard), not by one project's
 * connection: the shared bot cannot hold its Gateway session. Every
 * connection of the plugin shows it (connectionsStore.ts) until the source
 * clears it.
 */
import type { PluginProblem } from "../../contracts/pluginProblem.ts";
import { allRows } from "./statementResults.ts";

export interface PluginProblemSummary extends PluginProblem {
  /** When this problem (this code, from this source) began. */
  since: string;
}

/** A problem of a plugin as `source` (a part of it) reports it. */
export interface ReportedPluginProblem {
  pluginId: string;
  source: string;
  problem: PluginProblem;
}

/** Records `problem` for `source`; the same code again keeps its `since`. */
export async function recordPluginProblem(
  db: D1Database,
  { pluginId, source, problem }: ReportedPluginProblem,
  now = Date.now(),
): Promise<void> {
  await db
    .prepare(
      `INSERT INTO plugin_problems (plugin_id, source, code, cause, fix, since, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (plugin_id, source) DO UPDATE SET
         since = CASE WHEN plugin_problems.code = excluded.code THEN plugin_problems.since ELSE excluded.since END,
         code = excluded.code, cause = excluded.cause, fix = excluded.fix, updated_at = excluded.updated_at`,
    )
    .bind(pluginId, source, problem.code, problem.cause.slice(0, 1000), problem.fix.slice(0, 1000), now, now)
    .run();
}

/** The source is healthy again. */
export async function clearPluginProblem(db: D1Database, pluginId: string, source: string): Promise<void> {
  await db.prepare("DELETE FROM plugin_problems WHERE plugin_id = ? AND source = ?").bind(pluginId, source).run();
}

/** Each plugin's oldest current problem (of several sources, the one that began first). */
export async function pluginProblemsByPlugin(db: D1Database): Promise<Map<string, PluginProblemSummary>> {
  const rows = await allRows<{ plugin_id: string; code: string; cause: string; fix: string; since: number }>(
    db,
    "SELECT plugin_id, code, cause, fix, since FROM plugin_problems ORDER BY since, source",
  );
  const problems = new Map<string, PluginProblemSummary>();
  for (const r of rows) {
    if (!problems.has(r.plugin_id))
      problems.set(r.plugin_id, { code: r.code, cause: r.cause, fix: r.fix, since: new Date(r.since).toISOString() });
  }
  return problems;
}
