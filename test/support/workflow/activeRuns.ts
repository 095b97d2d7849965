/** A run as its events tell it (times in ms): a backend's view, or the JSON a project's routes answer. */
interface TimedRun {
  events: readonly { type: string; at: number }[];
}

/** When the run's queue let it start (the times a queue counts): its workflow_dequeued, or its workflow_created if it never queued. */
export function startedAt(run: TimedRun): number {
  return (run.events.find((e) => e.type === "workflow_dequeued") ?? run.events[0]!).at;
}

/** The most runs active at once, each from its start to its terminal event (an end before a start at the same ms). */
export function maxActive(runs: readonly TimedRun[]): number {
  const edges = runs.flatMap((run) => [
    { at: startedAt(run), delta: 1 },
    { at: run.events[run.events.length - 1]!.at, delta: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let active = 0;
  let most = 0;
  for (const edge of edges) {
    active += edge.delta;
    most = Math.max(most, active);
  }
  return most;
}
