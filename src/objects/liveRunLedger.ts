/**
 * The SQLite surface the ledger needs (a subset of the engine's SyncSql, restated here: the
 * platform's workers, which host the ledger, import nothing of the engine).
 */
export interface LedgerSql {
  all<Row extends Record<string, string | number | null>>(sql: string, ...params: (string | number)[]): Row[];
  run(sql: string, ...params: (string | number)[]): void;
  transaction<T>(fn: () => T): T;
}

/** What a hold did: every run id held (`added`: those it did not hold before), or none (the cap would be passed). */
export type HoldOutcome = { held: true; added: string[]; live: number } | { held: false; live: number; asked: number };

/**
 * An account's live runs, one row per (project, run) it holds a slot for:
 * the rules of the live-run budget, over the SQLite of the account's
 * `LiveRunBudget` actor (node:sqlite in the tests).
 *
 * - A hold is all or none: the ids it does not hold yet are added only if
 *   they all fit under the cap (a fan-out starts whole or not at all).
 * - Holding an id held already adds nothing (a start retried after a crash
 *   counts once), and is never refused, whatever the cap is now.
 * - A release deletes what it holds and counts only that: a duplicate end
 *   report, or an id it never held, frees nothing.
 * - The project is part of the key, so a project can only release its own runs.
 */
export interface LiveRunLedger {
  hold(projectId: number, runIds: readonly string[], cap: number): HoldOutcome;
  /** Answers how many of the ids were held (and are no longer). */
  release(projectId: number, runIds: readonly string[]): number;
  /** The account's live runs, all its projects together. */
  live(): number;
}

export function createLiveRunLedger(sql: LedgerSql): LiveRunLedger {
  // Keyed by (project, run) alone: a hold writes one row and a release one, where a rowid table
  // also writes its key's index (4 rows a run instead of 2). A table made before keeps its layout.
  sql.run(
    "CREATE TABLE IF NOT EXISTS live_runs (project_id INTEGER NOT NULL, run_id TEXT NOT NULL, PRIMARY KEY (project_id, run_id)) WITHOUT ROWID",
  );
  // One id per statement: Durable Object SQL takes at most 100 bound parameters, a fan-out names up to 1,000.
  const holds = (projectId: number, runId: string) =>
    sql.all("SELECT 1 AS held FROM live_runs WHERE project_id = ? AND run_id = ?", projectId, runId).length > 0;
  // The count is read once and then kept here (the ledger is its table's only writer): a COUNT(*) per
  // hold would read every live row, and at 10,000 live runs cost more than the rows a run writes.
  // It moves only once a transaction has committed.
  let count: number | null = null;
  const live = () => (count ??= sql.all<{ n: number }>("SELECT COUNT(*) AS n FROM live_runs")[0]?.n ?? 0);
  return {
    hold(projectId, runIds, cap) {
      const outcome = sql.transaction((): HoldOutcome => {
        const fresh = [...new Set(runIds)].filter((runId) => !holds(projectId, runId));
        const before = live();
        if (fresh.length > 0 && before + fresh.length > cap) return { held: false, live: before, asked: fresh.length };
        for (const runId of fresh)
          sql.run("INSERT INTO live_runs (project_id, run_id) VALUES (?, ?)", projectId, runId);
        return { held: true, added: fresh, live: before + fresh.length };
      });
      count = outcome.live;
      return outcome;
    },
    release(projectId, runIds) {
      const before = live();
      const released = sql.transaction(() => {
        let deleted = 0;
        for (const runId of new Set(runIds)) {
          if (!holds(projectId, runId)) continue;
          sql.run("DELETE FROM live_runs WHERE project_id = ? AND run_id = ?", projectId, runId);
          deleted++;
        }
        return deleted;
      });
      count = before - released;
      return released;
    },
    live,
  };
}
