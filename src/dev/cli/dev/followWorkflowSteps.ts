import type { RunEventView, WorkflowRunView } from "../../../engine/describeRun.ts";
import type { RunListPage } from "../../../engine/store.ts";
import { formatStepLines } from "./devLogLines.ts";

const POLL_MS = 1_000;
const RECENT_RUNS = 20;

/** Reads one API route as JSON; null when it answers with an error. */
export type ApiGet = <T>(pathAndQuery: string) => Promise<T | null>;

/**
 * What prints each workflow step transition as it happens, from the API
 * worker's workflow routes, one `tick()` at a time: the 20 newest runs, and
 * the events of each that is running or whose `updatedAt` moved. A running
 * run is read on every tick because its steps do not move the list's
 * `updatedAt` (the run index hears of a run when it starts and ends), so a
 * long run's steps are printed as they happen, not when it ends. Runs that
 * existed before the first tick print only what happens to them afterwards.
 */
export function createStepFollower(input: {
  slug: string;
  get: ApiGet;
  print: (line: string) => void;
  /** Whether the project (as last built) has workflows at all; no calls while it has none. */
  active: () => boolean;
}): { tick(): Promise<void> } {
  const base = `/projects/${encodeURIComponent(input.slug)}/workflows`;
  /** Per run: the last `updatedAt` seen, and the events already accounted for (null: those before `since`). */
  const runs = new Map<string, { updatedAt: number; seen: RunEventView[] | null; since: number }>();
  let first = true;
  let busy = false;
  return {
    async tick() {
      if (busy || !input.active()) return;
      busy = true;
      try {
        const page = await input.get<RunListPage>(`${base}?limit=${RECENT_RUNS}`);
        if (!page) return;
        for (const run of page.runs) {
          const known = runs.get(run.id);
          if (first) {
            runs.set(run.id, { updatedAt: run.updatedAt, seen: null, since: run.updatedAt });
            continue;
          }
          if (known && known.updatedAt === run.updatedAt && run.status !== "running") continue;
          const view = await input.get<WorkflowRunView>(`${base}/${encodeURIComponent(run.id)}`);
          if (!view) continue;
          const state = known ?? { updatedAt: 0, seen: [], since: 0 };
          const before = state.seen ?? view.events.filter((e) => e.at <= state.since);
          const fresh = view.events.filter((e) => e.seq > (before[before.length - 1]?.seq ?? 0));
          for (const line of formatStepLines(view.id, view.name, fresh, before)) input.print(line);
          runs.set(run.id, { updatedAt: run.updatedAt, seen: view.events, since: state.since });
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
    },
  };
}

/** `platform dev`'s step lines: a follower ticking once a second against the local API worker. */
export function followWorkflowSteps(input: {
  apiUrl: string;
  token: string;
  slug: string;
  print: (line: string) => void;
  active: () => boolean;
}): { stop(): void } {
  const get: ApiGet = async <T>(pathAndQuery: string) => {
    const response = await fetch(input.apiUrl + pathAndQuery, { headers: { authorization: `Bearer ${input.token}` } });
    return response.ok ? ((await response.json()) as T) : null;
  };
  const follower = createStepFollower({ slug: input.slug, get, print: input.print, active: input.active });
  const timer = setInterval(() => void follower.tick(), POLL_MS);
  timer.unref();
  void follower.tick();
  return { stop: () => clearInterval(timer) };
}
