import { runIndexOf } from "../../objects/runIndexClient.ts";
import type { WorkflowActorEnv } from "./workflowActorClient.ts";
import { workflowRunHost } from "../../objects/workflowRunHost.ts";
import { actorForRun } from "./durableObjectBackend.ts";

const SWEEP_CONCURRENCY = 50;
/** Finished runs past their retention deleted per sweep at most (the next sweep deletes more). */
const EXPIRED_RUNS_PER_SWEEP = 5_000;
const EXPIRED_BATCH = 500;

/**
 * The `__workflow-recovery` cron: asks each active run's actor whether it is
 * stuck (repairing and re-driving it if so), then deletes
 * the finished runs past their retention. Its cost follows the number of
 * active runs and of expired ones in the project's index, not the number of
 * finished runs or of events.
 */
export async function sweepStuckRuns(env: WorkflowActorEnv): Promise<string> {
  const index = runIndexOf(env);
  const active = await index.activeRunIds();
  let reenqueued = 0;
  for (let i = 0; i < active.length; i += SWEEP_CONCURRENCY) {
    const recovered = await Promise.all(
      active.slice(i, i + SWEEP_CONCURRENCY).map(async (runId) => {
        try {
          return await actorForRun(env, runId)?.recover(runId);
        } catch (error) {
          console.error(`workflow recovery: run ${runId}:`, error);
          return null;
        }
      }),
    );
    // Counted like the local backend: runs handed to an executor, not runs whose repair ended them (stuck_terminal).
    reenqueued += recovered.filter((r) => r?.reenqueued).length;
  }
  const message = `Re-enqueued ${reenqueued} workflow(s)`;
  console.log(message);
  const deleted = await deleteExpiredRuns(env);
  if (deleted > 0) console.log(`Deleted ${deleted} finished workflow run(s) past their retention`);
  return message;
}

/**
 * Retention: each expired run is deleted from its actor (all of the actor's
 * storage once it holds no run), then from the index; a run its actor could
 * not delete stays listed and is tried again at the next sweep.
 */
async function deleteExpiredRuns(env: WorkflowActorEnv): Promise<number> {
  const index = runIndexOf(env);
  let deleted = 0;
  while (deleted < EXPIRED_RUNS_PER_SWEEP) {
    const expired = await index.expiredRunIds(workflowRunHost.clock(), EXPIRED_BATCH);
    const gone: string[] = [];
    for (let i = 0; i < expired.length; i += SWEEP_CONCURRENCY) {
      await Promise.all(
        expired.slice(i, i + SWEEP_CONCURRENCY).map(async (runId) => {
          try {
            // A run id no actor of this namespace holds (made up, foreign) has nothing to delete there.
            await actorForRun(env, runId)?.forget(runId);
            gone.push(runId);
          } catch (error) {
            console.error(`workflow retention: run ${runId}:`, error);
          }
        }),
      );
    }
    if (gone.length > 0) await index.forget(gone);
    deleted += gone.length;
    if (expired.length < EXPIRED_BATCH || gone.length === 0) break;
  }
  return deleted;
}
