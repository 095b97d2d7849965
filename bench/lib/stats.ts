/** Small statistics helpers for the bench (no dependencies). */

export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const lower = Math.floor(position);
  const upper = Math.ceil(position);
  return sorted[lower]! + (sorted[upper]! - sorted[lower]!) * (position - lower);
}

export const median = (values: readonly number[]) => quantile(values, 0.5);
export const p95 = (values: readonly number[]) => quantile(values, 0.95);
export const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);
export const mean = (values: readonly number[]) => (values.length ? sum(values) / values.length : NaN);

export interface Summary {
  n: number;
  median: number;
  p95: number;
  min: number;
  max: number;
  mean: number;
}

export function summarize(values: readonly number[]): Summary {
  return {
    n: values.length,
    median: median(values),
    p95: p95(values),
    min: values.length ? Math.min(...values) : NaN,
    max: values.length ? Math.max(...values) : NaN,
    mean: mean(values),
  };
}

/**
 * Step-cycle timing of one run from the times its steps began (ms clock).
 * A step cycle is step start → next step start: for trivial steps it is pure
 * engine overhead (claim, run, commit, resolve the next step).
 */
export interface StepTimes {
  /** When each step began, in order. */
  starts: number[];
  /** For our engine: when each step's completion was committed (same order). */
  completions?: number[];
}

export interface CycleAnalysis {
  steps: number;
  /** (last start − first start) / (steps − 1). */
  perStepMs: number;
  /** Mean cycle of each block of `blockSize` consecutive steps. */
  blockPerStepMs: number[];
  /** Mean cycle over the first and the last 100 cycles (flatness within one run). */
  first100PerStepMs: number | null;
  last100PerStepMs: number | null;
  /** Our engine only: summed step_started→step_completed and step_completed→next step_started, ms. */
  inStepMs?: number;
  betweenStepsMs?: number;
}

export function analyzeCycles(times: StepTimes, blockSize = 50): CycleAnalysis {
  const { starts, completions } = times;
  const steps = starts.length;
  const span = steps > 1 ? starts[steps - 1]! - starts[0]! : NaN;
  const blocks: number[] = [];
  for (let i = 0; i + blockSize < steps; i += blockSize) blocks.push((starts[i + blockSize]! - starts[i]!) / blockSize);
  const window = (from: number, to: number) => (to - from > 0 ? (starts[to]! - starts[from]!) / (to - from) : null);
  const analysis: CycleAnalysis = {
    steps,
    perStepMs: span / (steps - 1),
    blockPerStepMs: blocks,
    first100PerStepMs: steps > 200 ? window(0, 100) : null,
    last100PerStepMs: steps > 200 ? window(steps - 101, steps - 1) : null,
  };
  if (completions && completions.length === steps) {
    let inStep = 0;
    let between = 0;
    for (let i = 0; i < steps; i++) {
      inStep += completions[i]! - starts[i]!;
      if (i + 1 < steps) between += starts[i + 1]! - completions[i]!;
    }
    analysis.inStepMs = inStep;
    analysis.betweenStepsMs = between;
  }
  return analysis;
}

/** Our event log → step start and completion times. Events are `[seq, type, at]`. */
export function stepTimesFromEvents(events: readonly (readonly [number, string, number])[]): StepTimes {
  const starts: number[] = [];
  const completions: number[] = [];
  for (const [, type, at] of events) {
    if (type === "step_started") starts.push(at);
    if (type === "step_completed") completions.push(at);
  }
  return { starts, completions };
}

export function round(value: number, digits = 3): number {
  if (!Number.isFinite(value)) return value;
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
