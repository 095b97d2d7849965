import type { StrandedRun, StrandedRuns, WorkflowShape } from "../../contracts/workflowShapes.ts";
import type { LivePosition, RunIndex } from "../storage/store.ts";

/**
 * The stranded-runs check: finding them. A new version of a project's code must
 * still have, for every live run (running, waiting or paused), the workflow it
 * belongs to and the step at its position (the step it is in, which it may
 * retry, or the one it will claim next), under that name or as an old name
 * in `renamed`. A run it lacks would fail there at once (`Workflow "x" has no
 * step "y"`): the deployment is refused, naming those runs, unless forced.
 */

/** How many stranded runs a refusal lists (the count says how many there are in all). */
export const STRANDED_RUNS_LISTED = 20;

/** What the position of a live run lacks in `next`: nothing (null), its workflow, or its step. */
function strandedRunLacks(
  position: Pick<LivePosition, "name" | "step">,
  next: readonly WorkflowShape[],
): "workflow" | "step" | null {
  const workflow = next.find((w) => w.name === position.name);
  if (!workflow) return "workflow";
  if (workflow.steps.includes(position.step)) return null;
  const renamed = workflow.renamed ?? {};
  return Object.hasOwn(renamed, position.step) && workflow.steps.includes(renamed[position.step] as string)
    ? null
    : "step";
}

/**
 * The live runs `next` would strand, from the index's live positions (one
 * grouped read, then one read per stranded position for the runs it names).
 */
export function findStrandedRuns(
  index: Pick<RunIndex, "livePositions" | "liveRunsAt">,
  next: readonly WorkflowShape[],
  limit = STRANDED_RUNS_LISTED,
): StrandedRuns {
  let count = 0;
  const runs: StrandedRun[] = [];
  for (const position of index.livePositions()) {
    const missing = strandedRunLacks(position, next);
    if (!missing) continue;
    count += position.runs;
    // Only as many as the list still has room for: the rest are counted, not read.
    const room = limit - runs.length;
    if (room > 0)
      for (const run of index.liveRunsAt(position.name, position.step, room))
        runs.push({
          runId: run.id,
          workflow: run.name,
          step: position.step,
          status: run.status === "paused" || run.status === "waiting" ? run.status : "running",
          missing,
        });
  }
  return { count, runs };
}

/** One line per stranded run, and how many more there are: what the CLI and `platform dev` print. */
export function describeStrandedRuns(stranded: StrandedRuns): string[] {
  const lines = stranded.runs.map(
    (run) =>
      `  ${run.runId}  ${run.workflow}  ${run.step}  (${run.missing === "workflow" ? `workflow "${run.workflow}" is gone` : `step "${run.step}" is gone`})`,
  );
  if (stranded.count > stranded.runs.length) lines.push(`  … and ${stranded.count - stranded.runs.length} more`);
  return lines;
}
