import path from "node:path";
import type { WorkerHost } from "../lib/miniflareHost.ts";
import { median, round } from "../lib/stats.ts";
import { WORKLOADS } from "../lib/workloads.ts";
import { measureCpu, throughputFigures } from "./shared.ts";
import { startCloudflareW2Host } from "./workerdCloudflare.ts";
import { startOursW2Host } from "./workerdOurs.ts";

type Engine = "ours" | "cloudflare";

/** One workload-2 batch on a fresh, warmed-up host. */
export interface HeadToHeadMeasurement {
  engine: Engine;
  /** Position in the interleaved sequence (0-based). */
  order: number;
  /** Seconds since the head-to-head began, when the batch started. */
  atSeconds: number;
  batchMs: number;
  stepsPerSecond: number;
  cpuPerStepMs: number | null;
}

export interface HeadToHeadPair {
  ours: HeadToHeadMeasurement;
  cloudflare: HeadToHeadMeasurement;
  /** ours steps/s ÷ Cloudflare steps/s. */
  ratio: number;
  /** Cloudflare workerd CPU per step ÷ ours (> 1: ours uses less). */
  cpuRatio: number | null;
}

export interface HeadToHeadFigures {
  runs: number;
  stepsPerRun: number;
  /** Which engine went first in each pair: ABBA (ours, CF | CF, ours | ours, CF | ...). */
  order: string;
  pairs: HeadToHeadPair[];
  medianRatio: number;
  minRatio: number;
  maxRatio: number;
  medianCpuRatio: number | null;
}

/**
 * Section H: workload 2 head to head. For WORKLOADS.w2Pairs pairs, in ABBA
 * order so slow drift of the machine (the per-actor runtime cost moves over
 * minutes here) hits both engines alike: start the engine's fresh host exactly
 * as its section does (same build, bindings, warm-up), run ONE workload-2
 * batch, record steps/s and workerd CPU per step, dispose. Each pair's ratio
 * compares the two adjacent batches.
 */
export async function benchW2HeadToHead(tmpDir: string, progress: (line: string) => void): Promise<HeadToHeadFigures> {
  const { runs, steps } = WORKLOADS.concurrent;
  const began = performance.now();
  const instances: Record<Engine, number> = { ours: 0, cloudflare: 0 };
  const start: Record<Engine, (instance: number) => Promise<WorkerHost>> = {
    ours: (instance) => startOursW2Host(path.join(tmpDir, "ours"), instance),
    cloudflare: (instance) => startCloudflareW2Host(path.join(tmpDir, "cloudflare"), instance),
  };
  let order = 0;
  const measure = async (engine: Engine): Promise<HeadToHeadMeasurement> => {
    const host = await start[engine](++instances[engine]);
    try {
      const atSeconds = round((performance.now() - began) / 1000, 1);
      const { value, cpuMs } = await measureCpu(host, () =>
        host.call<{ ms: number; perRun: number[] }>(`/bench/concurrent?runs=${runs}&steps=${steps}`),
      );
      const figures = throughputFigures(runs, steps, [{ ms: value.ms, cpuMs, perRunMs: value.perRun }]);
      return {
        engine,
        order: order++,
        atSeconds,
        batchMs: value.ms,
        stepsPerSecond: figures.stepsPerSecond,
        cpuPerStepMs: figures.cpuPerStepMs,
      };
    } finally {
      await host.dispose();
    }
  };

  const pairs: HeadToHeadPair[] = [];
  for (let i = 0; i < WORKLOADS.w2Pairs; i++) {
    const sequence: Engine[] = i % 2 === 0 ? ["ours", "cloudflare"] : ["cloudflare", "ours"];
    const got: Partial<Record<Engine, HeadToHeadMeasurement>> = {};
    for (const engine of sequence) got[engine] = await measure(engine);
    const ours = got.ours!;
    const cloudflare = got.cloudflare!;
    const pair: HeadToHeadPair = {
      ours,
      cloudflare,
      ratio: round(ours.stepsPerSecond / cloudflare.stepsPerSecond, 2),
      cpuRatio:
        ours.cpuPerStepMs && cloudflare.cpuPerStepMs ? round(cloudflare.cpuPerStepMs / ours.cpuPerStepMs, 2) : null,
    };
    pairs.push(pair);
    progress(
      `pair ${i + 1}/${WORKLOADS.w2Pairs} (${sequence.join(" then ")}): ours ${Math.round(ours.stepsPerSecond)} steps/s, Cloudflare ${Math.round(cloudflare.stepsPerSecond)} steps/s -> ${pair.ratio}x`,
    );
  }
  const ratios = pairs.map((p) => p.ratio);
  const cpuRatios = pairs.map((p) => p.cpuRatio).filter((r): r is number => r !== null);
  return {
    runs,
    stepsPerRun: steps,
    order: pairs.map((p) => (p.ours.order < p.cloudflare.order ? "ours,CF" : "CF,ours")).join(" | "),
    pairs,
    medianRatio: round(median(ratios), 2),
    minRatio: Math.min(...ratios),
    maxRatio: Math.max(...ratios),
    medianCpuRatio: cpuRatios.length ? round(median(cpuRatios), 2) : null,
  };
}
