import type { RunEventView, WorkflowRunView } from "../../../engine/describeRun.ts";
import type { RunListPage } from "../../../engine/store.ts";
import { formatStepLines } from "./devLogLines.ts";

const POLL_MS = 1_000;
const RECENT_RUNS = 20;

/**
 * Prints each workflow step transition as it happens, from the API worker's
 * workflow routes: one list call per second (the 20 newest runs), and a run's
 * events only when its `updatedAt` moved. Runs that existed before start-up
 * print only what happens to them afterwards.
 */
export function followWorkflowSteps(input: {
  apiUrl: string;
  token: string;
  slug: string;
  print: (line: string) => void;
  /** Whether the project (as last built) has workflows at all; no calls while it has none. */
  active: () => boolean;
}): { stop(): void } {
  const base = `${input.apiUrl}/projects/${encodeURIComponent(input.slug)}/workflows`;
  const get = async <T>(url: string): Promise<T | null> => {
    const response = await fetch(url, { headers: { authorization: `Bearer ${input.token}` } });
    return response.ok ? ((await response.json()) as T) : null;
  };
  /** Per run: the last `updatedAt` seen, and the events already accounted for (null: those before `since`). */
  const runs = new Map<string, { updatedAt: number; seen: RunEventView[] | null; since: number }>();
  let first = true;
  let busy = false;
  const tick = async () => {
    if (busy || !input.active()) return;
    busy = true;
    try {
      const page = await get<RunListPage>(`${base}?limit=${RECENT_RUNS}`);
      if (!page) return;
      for (const run of page.runs) {
        const known = runs.get(run.id);
        if (first) {
          runs.set(run.id, { updatedAt: run.updatedAt, seen: null, since: run.updatedAt });
          continue;
        }
        if (known && known.updatedAt === run.updatedAt) continue;
        const view = await get<WorkflowRunView>(`${base}/${encodeURIComponent(run.id)}`);
        if (!view) continue;
        const state = known ?? { updatedAt: 0, seen: [], since: 0 };
        const before = state.seen ?? view.events.filter((e) => e.at <= state.since);
        const fresh = view.events.filter((e) => e.seq > (before[before.length - 1]?.seq ?? 0));
        for (const line of formatStepLines(view.id, view.name, fresh, before)) input.print(line);
        runs.set(run.id, { updatedAt: view.updatedAt, seen: view.events, since: state.since });
      }
      // Newest first: a run that left the page never comes back to it.
      const listed = new Set(page.runs.map((run) => run.id));
      for (const id of runs.keys()) if (!listed.has(id)) runs.delete(id);
      first = false;
    } catch {
      // the platform is busy or stopping: the next tick catches up
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void tick(), POLL_MS);
  timer.unref();
  void tick();
  return { stop: () => clearInterval(timer) };
}
