import { median, p95, round } from "../lib/stats.ts";
import { startOursW2Host } from "./workerdOurs.ts";

/**
 * Section Q: what queueing costs. In workerd, on the bench project hosted as section A hosts it, R runs
 * that each hold H ms are started at once twice: as the workflow "hold" (no flow control) and as
 * "held10" (`concurrency: { limit: 10 }`), every start going through the key's WorkflowFlowKey actor.
 * From the runs' own event times: the start call's latency, the hand-off (a run ended → the next
 * queued run started, the queue's own cost), and the whole batch against its floor (R ÷ 10 × H).
 */

export interface QueuedStartFigures {
  runs: number;
  holdMS: number;
  flat: { startMedianMs: number; startAllMs: number; allResultsMs: number };
  limited: {
    startMedianMs: number;
    startAllMs: number;
    allResultsMs: number;
    /** R ÷ 10 × H: the batch if every hand-off were free. */
    floorMs: number;
    queuedRuns: number;
    handoffMedianMs: number;
    handoffP95Ms: number;
    maxActive: number;
  };
}

interface Batch {
  startAllMs: number;
  allResultsMs: number;
  startMs: number[];
  runs: [string, number][][];
}

const LIMIT = 10;

export async function benchQueuedStarts(
  tmpDir: string,
  progress: (line: string) => void,
  { runs = 200, holdMS = 50 } = {},
): Promise<QueuedStartFigures> {
  const host = await startOursW2Host(tmpDir, 0);
  try {
    progress(`${runs} runs holding ${holdMS} ms, without and with concurrency ${LIMIT}`);
    const answer = await host.call<{ flat: Batch; limited: Batch }>(`/bench/queued?runs=${runs}&holdMS=${holdMS}`);
    const { flat, limited } = answer;
    const startOf = (events: [string, number][]) =>
      (events.find(([type]) => type === "workflow_dequeued") ?? events[0]!)[1];
    const endOf = (events: [string, number][]) => events[events.length - 1]![1];
    const ends = limited.runs.map(endOf).sort((a, b) => a - b);
    const handoffs = limited.runs
      .filter((events) => events.some(([type]) => type === "workflow_dequeued"))
      .map((events) => {
        const started = startOf(events);
        const freedBy = ends.filter((end) => end <= started).pop();
        return freedBy === undefined ? null : started - freedBy;
      })
      .filter((ms): ms is number => ms !== null);
    const edges = limited.runs.flatMap((events) => [
      { at: startOf(events), delta: 1 },
      { at: endOf(events), delta: -1 },
    ]);
    edges.sort((a, b) => a.at - b.at || a.delta - b.delta);
    let active = 0;
    let maxActive = 0;
    for (const edge of edges) {
      active += edge.delta;
      maxActive = Math.max(maxActive, active);
    }
    return {
      runs,
      holdMS,
      flat: { startMedianMs: median(flat.startMs), startAllMs: flat.startAllMs, allResultsMs: flat.allResultsMs },
      limited: {
        startMedianMs: median(limited.startMs),
        startAllMs: limited.startAllMs,
        allResultsMs: limited.allResultsMs,
        floorMs: Math.ceil(runs / LIMIT) * holdMS,
        queuedRuns: handoffs.length,
        handoffMedianMs: round(median(handoffs), 1),
        handoffP95Ms: round(p95(handoffs), 1),
        maxActive,
      },
    };
  } finally {
    await host.dispose();
  }
}

export function formatQueuedStarts(figures: QueuedStartFigures | { error: string }): string {
  if ("error" in figures) return `Q. Queued starts: FAILED (${figures.error})`;
  const { runs, holdMS, flat, limited } = figures;
  return [
    `Q. Queued starts (ours in workerd, bench/projects/workflows hosted as in section A): ${runs} runs holding ${holdMS} ms each, started at once`,
    `  no flow control:  start call median ${flat.startMedianMs} ms; all started ${flat.startAllMs} ms, all results ${flat.allResultsMs} ms`,
    `  concurrency ${LIMIT}:   start call median ${limited.startMedianMs} ms; all started ${limited.startAllMs} ms, all results ${limited.allResultsMs} ms (floor ${limited.floorMs} ms: ${round(limited.allResultsMs / limited.floorMs, 2)}×)`,
    `    ${limited.queuedRuns} runs queued; hand-off (a run ended → the next started) median ${limited.handoffMedianMs} ms, p95 ${limited.handoffP95Ms} ms; at most ${limited.maxActive} active at once`,
  ].join("\n");
}
