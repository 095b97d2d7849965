import { allRows } from "./statementResults.ts";

/**
 * `workflow_executions_in_flight`: at most one queue message per run
 * (`scriptName`, `runId`). Whoever sends a message first claims the run's row;
 * the queue consumer releases it when it is done with the message, or keeps it
 * (counting a continuation) when it re-enqueues the run.
 */

/**
 * A row this old is taken over by the next claim: its message was lost (retries
 * exhausted, a crash between claim and send). Longer than one consumer call
 * (a 50 s step loop) plus the queue's retries.
 */
export const IN_FLIGHT_STALE_MS = 5 * 60_000;

/**
 * Claims the run for a new message: true when no message is in flight for it
 * (or the one recorded is stale), false when one is.
 */
export async function claimExecutionInFlight(
  db: D1Database,
  scriptName: string,
  runId: string,
  now: number,
): Promise<boolean> {
  const claimed = await allRows(
    db,
    `INSERT INTO workflow_executions_in_flight (script_name, run_id, enqueued_at, continuations) VALUES (?, ?, ?, 0)
     ON CONFLICT (script_name, run_id) DO UPDATE SET enqueued_at = excluded.enqueued_at, continuations = 0
       WHERE workflow_executions_in_flight.enqueued_at <= ?
     RETURNING run_id`,
    scriptName,
    runId,
    now,
    now - IN_FLIGHT_STALE_MS,
  );
  return claimed.length > 0;
}

/**
 * Keeps (or, for a message sent before rows were kept, makes) the run's row
 * for the message the consumer re-enqueues, counting one more continuation;
 * answers that count.
 */
export async function continueExecutionInFlight(
  db: D1Database,
  scriptName: string,
  runId: string,
  now: number,
): Promise<number> {
  const [row] = await allRows<{ continuations: number }>(
    db,
    `INSERT INTO workflow_executions_in_flight (script_name, run_id, enqueued_at, continuations) VALUES (?, ?, ?, 1)
     ON CONFLICT (script_name, run_id) DO UPDATE SET enqueued_at = excluded.enqueued_at,
       continuations = workflow_executions_in_flight.continuations + 1
     RETURNING continuations`,
    scriptName,
    runId,
    now,
  );
  return row?.continuations ?? 1;
}

/** The consumer is done with the run's message (done, waiting for its alarm, dropped), or the send failed. */
export async function releaseExecutionInFlight(db: D1Database, scriptName: string, runId: string): Promise<void> {
  await db
    .prepare("DELETE FROM workflow_executions_in_flight WHERE script_name = ? AND run_id = ?")
    .bind(scriptName, runId)
    .run();
}
