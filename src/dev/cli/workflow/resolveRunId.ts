import type { RunListPage } from "../../../engine/store.ts";
import { CliError } from "../commandLine.ts";

/** Pages of 100 runs looked through for a prefix before giving up (newest first, so recent runs are found). */
const MAX_PAGES = 10;

/**
 * The run a command names by its id or by a prefix of it (what `workflow list`
 * and `platform dev`'s step lines show). `exists` asks for the exact id first;
 * only when there is no such run are the runs listed and matched by prefix.
 * No match keeps the error of the exact lookup; several matches are a usage error.
 */
export async function resolveRunId<T>(
  given: string,
  exists: (runId: string) => Promise<T>,
  listPage: (cursor: string | undefined) => Promise<RunListPage>,
): Promise<{ runId: string; found?: T }> {
  let notFound: unknown;
  try {
    return { runId: given, found: await exists(given) };
  } catch (error) {
    notFound = error;
  }
  const matches: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const { runs, cursor: next } = await listPage(cursor);
    for (const run of runs) if (run.id.startsWith(given)) matches.push(run.id);
    if (!next || matches.length > 1) break;
    cursor = next;
  }
  if (matches.length === 1) return { runId: matches[0]! };
  if (matches.length > 1)
    throw new CliError(
      `"${given}" names more than one run (${matches.slice(0, 3).join(", ")}…): give more of the id.`,
      2,
    );
  throw notFound;
}
