import type { RunListPage } from "../../../engine/storage/store.ts";
import { CliError } from "../commandLine.ts";

/** Pages of 100 runs looked through for a workflow id or a prefix before giving up (newest first, so recent runs are found). */
const MAX_PAGES = 10;

/**
 * The run a command names, looked up in this order:
 * 1. a run id (`exists` asks for it exactly);
 * 2. a workflow id (`workflow start --id bob-1`): its newest run, which is its
 *    active run when it has one (one active run per workflow id);
 * 3. a unique prefix of a run id (what `workflow list` and `platform dev`'s step lines show).
 * Several runs under one prefix are a usage error; nothing found says what was looked for.
 */
export async function resolveRunId<T>(
  given: string,
  exists: (runId: string) => Promise<T>,
  listPage: (cursor: string | undefined) => Promise<RunListPage>,
): Promise<{ runId: string; found?: T }> {
  try {
    return { runId: given, found: await exists(given) };
  } catch {
    // not a run id: try the other two ways of naming a run
  }
  const prefixed: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const { runs, cursor: next } = await listPage(cursor);
    for (const run of runs) {
      if (run.workflowId === given) return { runId: run.id };
      if (run.id.startsWith(given)) prefixed.push(run.id);
    }
    if (!next) break;
    cursor = next;
  }
  if (prefixed.length === 1) return { runId: prefixed[0]! };
  if (prefixed.length > 1)
    throw new CliError(
      `"${given}" names more than one run (${prefixed.slice(0, 3).join(", ")}…): give more of the id.`,
      2,
    );
  throw new CliError(`No workflow run has the id or workflow id "${given}", and no run id starts with it.`);
}
