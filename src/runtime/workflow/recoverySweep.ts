import { runIndexOf } from "../../objects/runIndexClient.ts";
import type { WorkflowActorEnv } from "./workflowActorClient.ts";
import { actorForRun } from "./durableObjectBackend.ts";

const SWEEP_CONCURRENCY = 50;

/**
 * The `__workflow-recovery` cron: asks each active run's actor whether it is
 * stuck (repairing and re-driving it if so). Its cost follows the number of
 * active runs in the project's index, not the number of events.
 */
export async function sweepStuckRuns(env: WorkflowActorEnv): Promise<string> {
  const active = await runIndexOf(env).activeRunIds();
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
  return message;
}
