import { STRANDED_RUNS_CHECK_PATH } from "../../contracts/workflowControl.ts";
import type { StrandedRuns, WorkflowShape } from "../../contracts/workflowShapes.ts";
import { PlatformError } from "../../core/errors.ts";
import { callProjectWorker } from "../dispatch/callProjectWorker.ts";
import { resolveDispatcher } from "../dispatch/dispatcher.ts";
import type { ProjectRow } from "../db/projectsTable.ts";
import type { ApiEnv } from "./env.ts";

/** What the stranded-runs check of one push compares. */
export interface StrandedRunsCheck {
  project: Pick<ProjectRow, "id" | "slug" | "script_name" | "worker_secret">;
  /** The version running now (its deployment's metadata), null before the first push. */
  running: { metadata: string } | null;
  /** The new code's workflows. */
  next: WorkflowShape[];
  /** `platform push --force`: answer what it strands instead of refusing. */
  force: boolean;
}

/**
 * The stranded-runs check. Before a new version goes live, the
 * version running now is asked which of its live runs the new code's
 * workflows (names, steps and `renamed`) would strand: a run whose position
 * names a workflow or a step the new code lacks would fail there at once.
 * The push is refused (409 `conflict`, the runs in `details`) unless forced;
 * forced, it goes through and answers what it strands. A project whose
 * running version has no workflows has nothing to strand.
 */
export async function checkStrandedRuns(env: ApiEnv, push: StrandedRunsCheck): Promise<StrandedRuns> {
  const { project, running, next, force } = push;
  const none: StrandedRuns = { count: 0, runs: [] };
  if (!running || !hasWorkflows(running.metadata)) return none;
  const response = await callProjectWorker(resolveDispatcher(env), project, {
    method: "POST",
    pathAndQuery: STRANDED_RUNS_CHECK_PATH,
    body: JSON.stringify({
      workflows: next.map(({ name, steps, renamed }) => (renamed ? { name, steps, renamed } : { name, steps })),
    }),
  });
  if (!response.ok) {
    if (force) return none;
    const detail = await response.text().catch(() => "");
    throw new PlatformError(
      "upstream_error",
      `The stranded-runs check could not ask the running version of "${project.slug}" about its live workflow runs (status ${response.status}${detail ? `: ${detail.slice(0, 200)}` : ""}). Push with --force to skip the check.`,
    );
  }
  const stranded = (await response.json()) as StrandedRuns;
  if (stranded.count === 0 || force) return stranded;
  const first = stranded.runs[0];
  throw new PlatformError(
    "conflict",
    `This push would strand ${stranded.count} live workflow run(s) of "${project.slug}"` +
      (first ? `, e.g. run ${first.runId} of "${first.workflow}" at step "${first.step}"` : "") +
      `: the new code lacks the ${first?.missing === "workflow" ? "workflow" : "step"} they are at. ` +
      `Keep the old step name working with workflow(name, steps, { renamed: { oldStep: "newStep" } }), ` +
      "or push with --force (those runs then fail, each with its reason).",
    { stranded: stranded.runs, count: stranded.count },
  );
}

function hasWorkflows(metadata: string): boolean {
  try {
    const workflows = (JSON.parse(metadata) as { workflows?: unknown }).workflows;
    return Array.isArray(workflows) && workflows.length > 0;
  } catch {
    return false;
  }
}
