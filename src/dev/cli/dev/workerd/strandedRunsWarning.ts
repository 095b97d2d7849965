import { INTERNAL_HEADER, signRequestToken } from "../../../../core/requestToken.ts";
import { STRANDED_RUNS_CHECK_PATH } from "../../../../contracts/workflowControl.ts";
import { parseWorkflowShapes, type StrandedRuns } from "../../../../contracts/workflowShapes.ts";
import { describeStrandedRuns } from "../../../../engine/control/strandedRuns.ts";

type FetchLike = (url: string, init?: RequestInit) => Promise<Response>;

/**
 * When a stranded run fails, as the run actor and the recovery sweep behave:
 * the sweep (`platform dev`'s minute cron) drives a run nothing else will
 * wake, which then fails at once; a run with a wake-up pending (a sleep, a
 * retry's backoff, an event's timeout) counts as driven, so it fails at that
 * time, or sooner when an event it waits for arrives; a paused run waits
 * until it is resumed.
 */
export const STRANDED_RUNS_FATE =
  'Each fails ("has no step …") the next time it moves: at the next recovery sweep (each minute) if nothing will wake it; a sleeping or retrying run, or one waiting for an event with a timeout, when that time comes (or its event arrives); a paused run when it is resumed.';

/**
 * `platform dev`'s form of the stranded-runs check: a rebuild is not refused (it is
 * the code being written), but when the new code lacks a step or workflow a
 * live run is at, it says which runs, when they fail (`STRANDED_RUNS_FATE`)
 * and how to keep the old name with `renamed`. Asks the
 * project (now running the new code) through its internal check route;
 * answers the lines to print, none when nothing is stranded.
 */
export async function strandedRunsWarning(
  fetch: FetchLike,
  project: { id: string | number; workerSecret: string },
  metadata: Record<string, unknown>,
): Promise<string[]> {
  // Shapes only (name, steps, renamed): what the check route reads.
  const workflows = parseWorkflowShapes(metadata.workflows);
  const pathAndQuery = STRANDED_RUNS_CHECK_PATH;
  const body = JSON.stringify({ workflows });
  const token = await signRequestToken(
    "internal",
    { method: "POST", pathAndQuery, body },
    { projectId: project.id, secret: project.workerSecret },
  );
  const response = await fetch(`http://project.internal${pathAndQuery}`, {
    method: "POST",
    body,
    headers: { [INTERNAL_HEADER]: token, "content-type": "application/json" },
  });
  if (!response.ok) return [];
  const stranded = (await response.json()) as StrandedRuns;
  if (stranded.count === 0) return [];
  return [
    `Warning: this code strands ${stranded.count} live workflow run(s):`,
    ...describeStrandedRuns(stranded),
    STRANDED_RUNS_FATE,
    'Keep the old step name with workflow(name, steps, { renamed: { oldStep: "newStep" } }). `platform push` refuses such a version unless --force.',
  ];
}
