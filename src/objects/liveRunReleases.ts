import type { SyncSql } from "../engine/storage/syncSql.ts";
import type { LiveRunSlots } from "./liveRunSlots.ts";

/** Most slots one retry gives back per call. */
const RETRY_BATCH = 1000;

/**
 * Gives back the live-run slots of runs that ended, from the project's run
 * index (every run's end is reported there: by its actor, by the start that
 * saw it end, by the recovery sweep). A give-back the platform did not take
 * is kept in a table beside the index and tried again with the next report,
 * so an end is given back at least once; the platform counts it once.
 * The table is made only when a give-back first fails.
 */
export interface LiveRunReleases {
  /** Gives back `runIds` (after those still owed); on failure keeps them owed. */
  release(slots: LiveRunSlots, runIds: readonly string[]): Promise<void>;
}

export function createLiveRunReleases(sql: SyncSql): LiveRunReleases {
  // Read once per instance: only this instance makes the table after that.
  let table: boolean | undefined;
  const hasTable = () =>
    (table ??=
      sql.all("SELECT 1 AS t FROM sqlite_master WHERE type = 'table' AND name = 'live_run_releases'").length > 0);
  const owe = (runIds: readonly string[]) =>
    sql.transaction(() => {
      sql.run("CREATE TABLE IF NOT EXISTS live_run_releases (run_id TEXT PRIMARY KEY)");
      table = true;
      for (const runId of runIds) sql.run("INSERT OR IGNORE INTO live_run_releases (run_id) VALUES (?)", runId);
    });
  const owed = () =>
    hasTable()
      ? sql
          .all<{ run_id: string }>("SELECT run_id FROM live_run_releases LIMIT ?", RETRY_BATCH)
          .map((row) => row.run_id)
      : [];
  return {
    async release(slots, runIds) {
      const earlier = owed();
      try {
        if (earlier.length > 0) {
          await slots.release(earlier);
          sql.transaction(() => {
            for (const runId of earlier) sql.run("DELETE FROM live_run_releases WHERE run_id = ?", runId);
          });
        }
        if (runIds.length > 0) await slots.release(runIds);
      } catch (error) {
        console.error(
          `live-run budget: ${runIds.length} run end(s) not given back yet; kept for the next report:`,
          error,
        );
        if (runIds.length > 0) owe(runIds);
      }
    },
  };
}
