/**
 * Workload sizes: the same for every engine, bounded so one `npm run bench`
 * stays well under five minutes on a 2-core machine.
 */
export const WORKLOADS = {
  /** Workload 1: one run of this many trivial steps, repeated. */
  longRun: { steps: 1000, repeats: 3 },
  /** Workload 2: this many concurrent runs of `steps` steps, repeated (median repetition reported). */
  concurrent: { runs: 200, steps: 10, repeats: 3 },
  /**
   * Workload 2 head to head (section H): interleaved pairs, ABBA order, each
   * measurement ONE batch of `concurrent` on a fresh warmed-up host per engine.
   */
  w2Pairs: 8,
  /** Section D: rounds of the ladder (every rung once per round, interleaved). */
  breakdownRounds: 5,
  /** Workload 3: sequential 1-step runs, start → result(), after `warmup` unrecorded ones. */
  latency: { runs: 50, warmup: 5 },
  /** Workload 4: per-step loop cost at each run length (runs per length). */
  flatness: [
    { steps: 10, runs: 30 },
    { steps: 100, runs: 10 },
    { steps: 1000, runs: 0 }, // taken from workload 1
  ],
  /** Steps per block when per-step times are read from event timestamps (ms clock). */
  blockSize: 50,
  /** Workload 5: completed runs added (many short ones at once, then long ones) before the sweep is timed again. */
  sweepLog: { manyRuns: 200, manyRunsSteps: 10, longRuns: 20, longRunsSteps: 1000 },
  /** Workload 5: active-run counts at which the sweep is timed, and sweeps per point. */
  sweepActive: [50, 200],
  sweepRepeats: 5,
} as const;

export const TARGETS = {
  /** Median per-step overhead in workerd, ms. */
  perStepMedianMs: 0.5,
  /** Our advantage over Cloudflare Workflows' local engine on workloads 1 and 2. */
  speedupVsCloudflare: 5,
} as const;
