import { median, round } from "../lib/stats.ts";
import { measureCpu } from "./shared.ts";
import { startOursW2Host } from "./workerdOurs.ts";

/**
 * Section F: child workflows in workerd, on the bench project hosted as
 * section A hosts it. One parent fans out to N children (one trivial step
 * each, each child its own run actor) and its next step reads all their
 * outcomes: parent start → parent result, on the worker's clock. A fresh
 * Miniflare per size, so no figure pays for the actors another left behind.
 */

/** Fan-outs timed per size (after one untimed fan-out of 10 children). */
const REPEATS = 3;
const SIZES = [100, 1000];

export interface FanOutPoint {
  children: number;
  /** Parent start → parent result, each repeat (ms, worker clock). */
  samples: number[];
  medianMs: number;
  /** How long `workflow.start` of the parent took (its first step has started the children by then, or is starting them). */
  startMs: number[];
  childrenPerSecond: number;
  cpuMsPerFanOut: number | null;
}

export interface FanOutFigures {
  points: FanOutPoint[];
}

export async function benchFanOut(tmpDir: string, progress: (line: string) => void): Promise<FanOutFigures> {
  const points: FanOutPoint[] = [];
  let instance = 0;
  for (const children of SIZES) {
    progress(`one parent with ${children} children, ${REPEATS} times`);
    const host = await startOursW2Host(tmpDir, ++instance);
    try {
      await host.call("/bench/fan-out?children=10");
      const samples: number[] = [];
      const startMs: number[] = [];
      const { cpuMs } = await measureCpu(host, async () => {
        for (let i = 0; i < REPEATS; i++) {
          const answer = await host.call<{ ms: number; startMs: number }>(`/bench/fan-out?children=${children}`);
          samples.push(answer.ms);
          startMs.push(answer.startMs);
        }
      });
      const medianMs = median(samples);
      points.push({
        children,
        samples,
        medianMs,
        startMs,
        childrenPerSecond: round((children / medianMs) * 1000, 0),
        cpuMsPerFanOut: cpuMs === null ? null : round(cpuMs / REPEATS, 0),
      });
    } finally {
      await host.dispose();
    }
  }
  return { points };
}

export function formatFanOut(figures: FanOutFigures | { error: string }): string {
  if ("error" in figures) return `F. Fan-out: FAILED (${figures.error})`;
  const lines = [
    "F. Fan-out (ours in workerd, bench/projects/workflows hosted as in section A; a fresh Miniflare per size)",
    "  one parent whose first step starts N children (1 step each, each its own run actor), whose next step reads them all:",
  ];
  for (const p of figures.points) {
    lines.push(
      `    ${p.children.toLocaleString("en-US").padStart(5)} children: parent start → parent result median ${round(p.medianMs / 1000, 2)} s (${p.samples.map((ms) => `${ms} ms`).join(", ")}), ${p.childrenPerSecond.toLocaleString("en-US")} children/s; parent's start call ${median(p.startMs)} ms; workerd CPU ${p.cpuMsPerFanOut === null ? "n/a" : `${p.cpuMsPerFanOut} ms`} per fan-out`,
    );
  }
  return lines.join("\n");
}
