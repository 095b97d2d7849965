import { INTERNAL_HEADER, signRequestToken } from "../../../core/requestToken.ts";
import { parseWorkflowShapes, type StrandedRuns } from "../../../contracts/workflowShapes.ts";
import { describeStrandedRuns } from "../../../engine/strandedRuns.ts";

type FetchLike = (url: string, init?: RequestInit) => Promise<Response>;

/**
 * `platform dev`'s form of the push check: a rebuild is not refused (it is
 * the code being written), but when the new code lacks a step or workflow a
 * live run is at, it says which runs, and that they fail at the next
 * recovery sweep unless the old name is kept with `renamed`. Asks the
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
  const pathAndQuery = "/__workflow/check";
  const body = JSON.stringify({ workflows });
  const token = await signRequestToken("internal", project.id, project.workerSecret, {
    method: "POST",
    pathAndQuery,
    body,
  });
  const response = await fetch(`http://project.internal${pathAndQuery}`, {
    method: "POST",
    body,
    headers: { [INTERNAL_HEADER]: token, "content-type": "application/json" },
  });
  if (!response.ok) return [];
  const stranded = (await response.json()) as StrandedRuns;
  if (stranded.count === 0) return [];
  return [
    `Warning: this code strands ${stranded.count} live workflow run(s); they fail at the next recovery sweep:`,
    ...describeStrandedRuns(stranded),
    'Keep the old step name with workflow(name, steps, { renamed: { oldStep: "newStep" } }). `platform push` refuses such a version unless --force.',
  ];
}
