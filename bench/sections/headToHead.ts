import path from "node:path";
import { interleavedPairs, pairOrder, ratioSpread, type Placed } from "../lib/interleavedPairs.ts";
import type { WorkerHost } from "../lib/miniflareHost.ts";
import { median, round } from "../lib/stats.ts";
import { WORKLOADS } from "../lib/workloads.ts";
import { measureCpu, throughputFigures } from "./shared.ts";
import { startCloudflareW2Host } from "./workerdCloudflare.ts";
import { startOursW2Host } from "./workerdOurs.ts";

export type Engine = "ours" | "cloudflare";
export const ENGINES = ["ours", "cloudflare"] as const satisfies readonly [Engine, Engine];
export const ENGINE_LABELS: Record<Engine, string> = { ours: "ours", cloudflare: "CF" };

let hostsStarted = 0;

/**
 * A fresh host of the engine, started, built and warmed up exactly as its own
 * section does (`startOursW2Host` / `startCloudflareW2Host`); state folders are
 * numbered across every head-to-head that shares `tmpDir` (and its one build).
 */
export function freshHost(engine: Engine, tmpDir: string): Promise<WorkerHost> {
  const instance = ++hostsStarted;
  return engine === "ours"
    ? startOursW2Host(path.join(tmpDir, "ours"), instance)
    : startCloudflareW2Host(path.join(tmpDir, "cloudflare"), instance);
}

/** Runs `fn` on a fresh warmed-up host of the engine, then disposes of it. */
export async function onFreshHost<T>(engine: Engine, tmpDir: string, fn: (host: WorkerHost) => Promise<T>): Promise<T> {
  const host = await freshHost(engine, tmpDir);
  try {
    return await fn(host);
  } finally {
    await host.dispose();
  }
}

/** One workload-2 batch on a fresh, warmed-up host. */
export interface HeadToHeadMeasurement extends Placed {
  engine: Engine;
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
  /** Each engine's steps/s, median over the pairs. */
  oursStepsPerSecond: number;
  cloudflareStepsPerSecond: number;
}

/** ONE workload-2 batch on a fresh warmed-up host of the engine: steps/s and workerd CPU per step. */
export function w2Batch(engine: Engine, tmpDir: string): Promise<Omit<HeadToHeadMeasurement, keyof Placed>> {
  const { runs, steps } = WORKLOADS.concurrent;
  return onFreshHost(engine, tmpDir, async (host) => {
    const { value, cpuMs } = await measureCpu(host, () =>
      host.call<{ ms: number; perRun: number[] }>(`/bench/concurrent?runs=${runs}&steps=${steps}`),
    );
    const figures = throughputFigures(runs, steps, [{ ms: value.ms, cpuMs, perRunMs: value.perRun }]);
    return { engine, batchMs: value.ms, stepsPerSecond: figures.stepsPerSecond, cpuPerStepMs: figures.cpuPerStepMs };
  });
}

/**
 * Section H, workload 2: for WORKLOADS.w2Pairs pairs in ABBA order, start the
 * engine's fresh host exactly as its section does, run ONE workload-2 batch,
 * record steps/s and workerd CPU per step, dispose. Each pair's ratio compares
 * the two adjacent batches.
 */
export async function benchW2HeadToHead(tmpDir: string, progress: (line: string) => void): Promise<HeadToHeadFigures> {
  const { runs, steps } = WORKLOADS.concurrent;
  const measure = (engine: Engine) => w2Batch(engine, tmpDir);
  const measured = await interleavedPairs(ENGINES, WORKLOADS.w2Pairs, measure, (pair, i, sequence) =>
    progress(
      `pair ${i + 1}/${WORKLOADS.w2Pairs} (${sequence.join(" then ")}): ours ${Math.round(pair.ours.stepsPerSecond)} steps/s, Cloudflare ${Math.round(pair.cloudflare.stepsPerSecond)} steps/s -> ${round(pair.ours.stepsPerSecond / pair.cloudflare.stepsPerSecond, 2)}x`,
    ),
  );
  const pairs: HeadToHeadPair[] = measured.map(({ ours, cloudflare }) => ({
    ours,
    cloudflare,
    ratio: round(ours.stepsPerSecond / cloudflare.stepsPerSecond, 2),
    cpuRatio:
      ours.cpuPerStepMs && cloudflare.cpuPerStepMs ? round(cloudflare.cpuPerStepMs / ours.cpuPerStepMs, 2) : null,
  }));
  const cpuRatios = pairs.map((p) => p.cpuRatio).filter((r): r is number => r !== null);
  return {
    runs,
    stepsPerRun: steps,
    order: pairOrder(pairs, ENGINES, ENGINE_LABELS),
    pairs,
    ...ratioSpread(pairs.map((p) => p.ratio)),
    medianCpuRatio: cpuRatios.length ? round(median(cpuRatios), 2) : null,
    oursStepsPerSecond: round(median(pairs.map((p) => p.ours.stepsPerSecond)), 0),
    cloudflareStepsPerSecond: round(median(pairs.map((p) => p.cloudflare.stepsPerSecond)), 0),
  };
}
