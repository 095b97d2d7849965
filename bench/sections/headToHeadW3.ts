import { interleavedPairs, pairOrder, ratioSpread, type Placed } from "../lib/interleavedPairs.ts";
import { mean, median, p95, round } from "../lib/stats.ts";
import { WORKLOADS } from "../lib/workloads.ts";
import { ENGINE_LABELS, ENGINES, onFreshHost, type Engine } from "./headToHead.ts";
import { measureCpu } from "./shared.ts";

/** One workload-3 batch (sequential 1-step runs, start → result) on a fresh, warmed-up host. */
export interface W3Measurement extends Placed {
  engine: Engine;
  runs: number;
  /** start → result of each run, inside the worker (workerd's 1 ms clock): median, p95, mean. */
  medianMs: number;
  p95Ms: number;
  meanMs: number;
  /** The start call alone (ours: `workflow.start`; Cloudflare: `create()`), median. */
  startCallMedianMs: number;
  /** workerd CPU per run over the whole batch (Cloudflare's includes the route's untimed status() check). */
  cpuPerRunMs: number | null;
}

export interface W3Pair {
  ours: W3Measurement;
  cloudflare: W3Measurement;
  /** Cloudflare's median ÷ ours (> 1: ours is faster). */
  ratio: number;
  /** The same with the batches' means: finer than medians of whole-ms readings when runs take 1–3 ms. */
  meanRatio: number;
}

export interface W3HeadToHeadFigures {
  runsPerBatch: number;
  /** Which engine went first in each pair (ABBA). */
  order: string;
  pairs: W3Pair[];
  medianRatio: number;
  minRatio: number;
  maxRatio: number;
  /** Median over the pairs of `meanRatio` (information). */
  medianMeanRatio: number;
  /** Each engine's per-batch median start → result, median over the pairs. */
  oursMedianMs: number;
  cloudflareMedianMs: number;
}

/**
 * Section H, workload 3: as the workload-2 head to head, WORKLOADS.w3Pairs
 * pairs in ABBA order, each measurement ONE `/bench/latency` batch of
 * WORKLOADS.latency.runs sequential 1-step runs on that engine's fresh
 * warmed-up host. A pair's ratio is Cloudflare's median start → result ÷ ours.
 */
export async function benchW3HeadToHead(
  tmpDir: string,
  progress: (line: string) => void,
): Promise<W3HeadToHeadFigures> {
  const runs = WORKLOADS.latency.runs;
  const measure = (engine: Engine) =>
    onFreshHost(engine, tmpDir, async (host) => {
      const { value, cpuMs } = await measureCpu(host, () =>
        host.call<{ samples: { ms: number; startMs: number }[] }>(`/bench/latency?n=${runs}`),
      );
      const ms = value.samples.map((s) => s.ms);
      return {
        engine,
        runs: ms.length,
        medianMs: round(median(ms), 2),
        p95Ms: round(p95(ms), 2),
        meanMs: round(mean(ms), 2),
        startCallMedianMs: round(median(value.samples.map((s) => s.startMs)), 2),
        cpuPerRunMs: cpuMs === null ? null : round(cpuMs / ms.length, 3),
      };
    });

  const measured = await interleavedPairs(ENGINES, WORKLOADS.w3Pairs, measure, (pair, i, sequence) =>
    progress(
      `pair ${i + 1}/${WORKLOADS.w3Pairs} (${sequence.join(" then ")}): start -> result median ours ${pair.ours.medianMs} ms, Cloudflare ${pair.cloudflare.medianMs} ms -> ${round(pair.cloudflare.medianMs / pair.ours.medianMs, 2)}x`,
    ),
  );
  const pairs: W3Pair[] = measured.map(({ ours, cloudflare }) => ({
    ours,
    cloudflare,
    ratio: round(cloudflare.medianMs / ours.medianMs, 2),
    meanRatio: round(cloudflare.meanMs / ours.meanMs, 2),
  }));
  return {
    runsPerBatch: runs,
    order: pairOrder(pairs, ENGINES, ENGINE_LABELS),
    pairs,
    ...ratioSpread(pairs.map((p) => p.ratio)),
    medianMeanRatio: round(median(pairs.map((p) => p.meanRatio)), 2),
    oursMedianMs: round(median(pairs.map((p) => p.ours.medianMs)), 2),
    cloudflareMedianMs: round(median(pairs.map((p) => p.cloudflare.medianMs)), 2),
  };
}
