import {
  analyzeCycles,
  median,
  p95,
  round,
  summarize,
  type CycleAnalysis,
  type StepTimes,
  type Summary,
} from "../lib/stats.ts";
import { WORKLOADS } from "../lib/workloads.ts";

/** What every engine section reports for workloads 1–4 (5 is ours only). */
export interface LongRunFigures {
  steps: number;
  runs: {
    /** start → result(), as the caller saw it (inside the worker for workerd engines). */
    endToEndMs: number;
    cycle: CycleAnalysis;
    cpuMs: number | null;
  }[];
  /** Per-step cycle time: pooled blocks of WORKLOADS.blockSize steps from all runs. */
  perStep: Summary;
  /** Mean cycle over the whole run (last start − first start) / (steps − 1), median over runs. */
  perStepWholeRunMs: number;
  /** end-to-end ms / steps, median over runs (includes start and result overheads). */
  endToEndPerStepMs: number;
  /** CPU ms per step of the engine's process (workerd or this Node process), median over runs. */
  cpuPerStepMs: number | null;
  /** Our engine only: share of the cycle between step_started and step_completed. */
  inStepShare?: number;
  first100PerStepMs: number | null;
  last100PerStepMs: number | null;
  /** Our engine in workerd: medians of start call → first step_started, and last (terminal) event → result() resolved. */
  startToFirstStepMs?: number;
  terminalToResultMs?: number;
}

export function longRunFigures(steps: number, runs: LongRunFigures["runs"]): LongRunFigures {
  const blocks = runs.flatMap((r) => r.cycle.blockPerStepMs);
  const withSplit = runs.filter((r) => r.cycle.inStepMs !== undefined);
  const cpu = runs.map((r) => r.cpuMs).filter((c): c is number => c !== null);
  const figures: LongRunFigures = {
    steps,
    runs,
    perStep: roundSummary(summarize(blocks)),
    perStepWholeRunMs: round(median(runs.map((r) => r.cycle.perStepMs))),
    endToEndPerStepMs: round(median(runs.map((r) => r.endToEndMs / steps))),
    cpuPerStepMs: cpu.length ? round(median(cpu) / steps) : null,
    first100PerStepMs: round(median(runs.map((r) => r.cycle.first100PerStepMs ?? NaN))),
    last100PerStepMs: round(median(runs.map((r) => r.cycle.last100PerStepMs ?? NaN))),
  };
  if (withSplit.length) {
    const inStep = withSplit.reduce((a, r) => a + r.cycle.inStepMs!, 0);
    const between = withSplit.reduce((a, r) => a + r.cycle.betweenStepsMs!, 0);
    figures.inStepShare = round(inStep / (inStep + between));
  }
  return figures;
}

export interface ThroughputFigures {
  runs: number;
  stepsPerRun: number;
  repeats: { ms: number; stepsPerSecond: number; cpuMs: number | null; perRunMs: Summary }[];
  /** The median repetition's figure. */
  stepsPerSecond: number;
  cpuPerStepMs: number | null;
}

export function throughputFigures(
  runs: number,
  stepsPerRun: number,
  repeats: { ms: number; cpuMs: number | null; perRunMs: number[] }[],
): ThroughputFigures {
  const rows = repeats.map((r) => ({
    ms: r.ms,
    stepsPerSecond: round((runs * stepsPerRun) / (r.ms / 1000), 1),
    cpuMs: r.cpuMs === null ? null : round(r.cpuMs, 1),
    perRunMs: roundSummary(summarize(r.perRunMs)),
  }));
  const cpu = rows.map((r) => r.cpuMs).filter((c): c is number => c !== null);
  return {
    runs,
    stepsPerRun,
    repeats: rows,
    stepsPerSecond: round(median(rows.map((r) => r.stepsPerSecond)), 1),
    cpuPerStepMs: cpu.length ? round(median(cpu) / (runs * stepsPerRun), 4) : null,
  };
}

/** Runs `fn` and returns its value with the CPU ms the host's workerd used meanwhile (null without /proc). */
/**
 * The same warm-up for every engine's fresh host (not recorded): a ping, one
 * 200-step run, five 1-step runs. A host that fails it is disposed.
 */
export async function warmedUp<H extends { call(pathAndQuery: string): Promise<unknown>; dispose(): Promise<void> }>(
  host: H,
): Promise<H> {
  try {
    await host.call("/bench/ping");
    await host.call("/bench/run?steps=200");
    await host.call("/bench/latency?n=5");
    return host;
  } catch (error) {
    await host.dispose().catch(() => {});
    throw error;
  }
}

export async function measureCpu<T>(
  host: { cpuMs(): number | null },
  fn: () => Promise<T>,
): Promise<{ value: T; cpuMs: number | null }> {
  const before = host.cpuMs();
  const value = await fn();
  const after = host.cpuMs();
  return { value, cpuMs: before === null || after === null ? null : after - before };
}

export interface LatencyFigures {
  runs: number;
  /** start → result() of a 1-step run. */
  ms: Summary;
  /** How long `start` itself took (the call returned). */
  startCallMs: Summary;
  /** Medians of the parts of one run, where the engine's timestamps allow (ms from the start call). */
  breakdown?: Record<string, number>;
}

export function latencyFigures(
  samples: { ms: number; startMs: number }[],
  breakdown?: Record<string, number[]>,
): LatencyFigures {
  const figures: LatencyFigures = {
    runs: samples.length,
    ms: roundSummary(summarize(samples.map((s) => s.ms))),
    startCallMs: roundSummary(summarize(samples.map((s) => s.startMs))),
  };
  if (breakdown)
    figures.breakdown = Object.fromEntries(Object.entries(breakdown).map(([k, v]) => [k, round(median(v), 2)]));
  return figures;
}

export interface FlatnessPoint {
  steps: number;
  runs: number;
  /** Mean step cycle inside the runs' step loops (from step start times; coarse for short runs on a 1 ms clock). */
  loopPerStepMs: number;
  /** Median start -> result of a run of this length. */
  endToEndMedianMs: number;
  endToEndPerStepMs: number;
}

export interface FlatnessFigures {
  points: FlatnessPoint[];
  /**
   * Marginal cost of a step between consecutive lengths, from the end-to-end
   * medians: (T(longer) − T(shorter)) / (extra steps). The fixed start/result
   * cost cancels out, and the two clock readings are I/O-exact, so this is
   * the robust flatness measure: with a replay of the log per step it would
   * grow with length.
   */
  marginal: { from: number; to: number; msPerStep: number }[];
  /** Marginal cost per step between the two longest lengths ÷ between the two shortest. */
  marginalRatio: number;
  /** loop per-step at the longest length ÷ at the shortest. */
  ratioLongestToShortest: number;
}

/** Workload 1's runs as the longest flatness point. */
export function longRunPoint(longRun: LongRunFigures): FlatnessPoint {
  const endToEnd = median(longRun.runs.map((r) => r.endToEndMs));
  return {
    steps: longRun.steps,
    runs: longRun.runs.length,
    loopPerStepMs: longRun.perStepWholeRunMs,
    endToEndMedianMs: round(endToEnd, 2),
    endToEndPerStepMs: round(endToEnd / longRun.steps),
  };
}

/** Loop cost per step over many runs of one length: summed cycle spans / summed cycles. */
export function flatnessPoint(steps: number, runs: { endToEndMs: number; times: StepTimes }[]): FlatnessPoint {
  let span = 0;
  let cycles = 0;
  for (const run of runs) {
    const { starts } = run.times;
    span += starts[starts.length - 1]! - starts[0]!;
    cycles += starts.length - 1;
  }
  return {
    steps,
    runs: runs.length,
    loopPerStepMs: round(span / cycles),
    endToEndMedianMs: round(median(runs.map((r) => r.endToEndMs)), 2),
    endToEndPerStepMs: round(median(runs.map((r) => r.endToEndMs / steps))),
  };
}

export function flatnessFigures(points: FlatnessPoint[]): FlatnessFigures {
  const first = points[0]!;
  const last = points[points.length - 1]!;
  const marginal = points.slice(1).map((p, i) => ({
    from: points[i]!.steps,
    to: p.steps,
    msPerStep: round((p.endToEndMedianMs - points[i]!.endToEndMedianMs) / (p.steps - points[i]!.steps)),
  }));
  return {
    points,
    marginal,
    marginalRatio: round(marginal[marginal.length - 1]!.msPerStep / marginal[0]!.msPerStep, 2),
    ratioLongestToShortest: round(last.loopPerStepMs / first.loopPerStepMs, 2),
  };
}

export function roundSummary(s: Summary): Summary {
  return {
    n: s.n,
    median: round(s.median),
    p95: round(s.p95),
    min: round(s.min),
    max: round(s.max),
    mean: round(s.mean),
  };
}

export { analyzeCycles, p95, WORKLOADS };
