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
  /**
   * Workload 3 head to head (section H): interleaved pairs, ABBA order, each
   * measurement ONE batch of `latency.runs` sequential runs on a fresh warmed-up host per engine
   * (a pair takes ~2 s, so more pairs than w2's: a slow host now and then moves the median less).
   */
  w3Pairs: 16,
  /**
   * Section B: the Durable Object backend (a fresh warmed-up workerd host) and
   * the Node backend (a fresh file, same warm-up), ABBA pairs of ONE workload-2 batch each.
   */
  backendPairs: 8,
  /** Section D: rounds of the ladder (every rung once per round, interleaved). */
  breakdownRounds: 7,
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
  /**
   * Section L (scale): `burst` 1-step runs, sent from Node as requests of `batch` runs started together,
   * `inFlight` requests at a time (one workerd keeps ~6,600 run actors live at most: see bench/README.md);
   * `parked` runs (half sleeping, half waiting for an event, `parkMS` away) started in one request. The
   * recovery sweep is timed (`sweepRepeats` sweeps in a row) with 0 active runs, all parked, half (the
   * waiters woken) and `intermediate` (the other sleepers cancelled).
   */
  scale: {
    burst: 10_000,
    batch: 100,
    inFlight: 10,
    parked: 1_000,
    intermediate: 250,
    sweepRepeats: 5,
    parkMS: 3_600_000,
  },
} as const;

/** Issue 16's targets; the w2 and w3 ones are judged on section H's paired medians. */
export const TARGETS = {
  /** Median per-step overhead in workerd (w1), ms: at most this. */
  perStepMedianMs: 0.05,
  /** Our per-step advantage over Cloudflare Workflows' local engine on workload 1. */
  w1SpeedupVsCloudflare: 5,
  /** Our steps/s ÷ Cloudflare's on workload 2 (paired median): at least this. */
  w2SpeedupVsCloudflare: 10,
  /** Cloudflare's start → result ÷ ours on workload 3 (paired median): at least this. */
  w3SpeedupVsCloudflare: 3,
  /** Durable Object backend's w2 steps/s ÷ the Node backend's: at least this. */
  durableObjectsOverNode: 1,
  /** Flatness (w4): the last marginal step cost ÷ the first, and last 100 steps ÷ first 100 of a 1,000-step run: at most this. */
  flatnessRatio: 2,
} as const;
