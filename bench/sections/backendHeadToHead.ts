import path from "node:path";
import { interleavedPairs, pairOrder, ratioSpread, type Placed } from "../lib/interleavedPairs.ts";
import { median, round } from "../lib/stats.ts";
import { WORKLOADS } from "../lib/workloads.ts";
import { w2Batch } from "./headToHead.ts";
import { concurrentBatch, warmUp, withNodeBackend } from "./nodeBackend.ts";
import { throughputFigures } from "./shared.ts";

type Backend = "durableObjects" | "node";
const BACKENDS = ["durableObjects", "node"] as const satisfies readonly [Backend, Backend];
const LABELS: Record<Backend, string> = { durableObjects: "DO", node: "Node" };

/** One workload-2 batch on a fresh backend (a warmed-up workerd host, or a warmed-up Node backend on a new file). */
export interface BackendMeasurement extends Placed {
  batchMs: number;
  stepsPerSecond: number;
  /** CPU per step of the backend's process: workerd, or this Node process. */
  cpuPerStepMs: number | null;
}

export interface BackendPair {
  durableObjects: BackendMeasurement;
  node: BackendMeasurement;
  /** Durable Object backend's steps/s ÷ the Node backend's (≥ 1: the Durable Object backend at least matches). */
  ratio: number;
}

export interface BackendPairsFigures {
  runs: number;
  stepsPerRun: number;
  order: string;
  pairs: BackendPair[];
  medianRatio: number;
  minRatio: number;
  maxRatio: number;
  /** Each backend's steps/s, median over the pairs. */
  durableObjectsStepsPerSecond: number;
  nodeStepsPerSecond: number;
}

/**
 * Section B, paired: workload 2 on our two backends in WORKLOADS.backendPairs
 * ABBA pairs, each measurement ONE batch: the Durable Object backend on a
 * fresh warmed-up workerd host exactly as in sections A and H, the Node
 * backend on a fresh file in this process after the same warm-up.
 */
export async function benchBackendPairs(
  tmpDir: string,
  progress: (line: string) => void,
): Promise<BackendPairsFigures> {
  const { runs, steps } = WORKLOADS.concurrent;
  let nodeFiles = 0;
  const measure = async (backend: Backend): Promise<Omit<BackendMeasurement, keyof Placed>> => {
    if (backend === "durableObjects") {
      const { batchMs, stepsPerSecond, cpuPerStepMs } = await w2Batch("ours", tmpDir);
      return { batchMs, stepsPerSecond, cpuPerStepMs };
    }
    return withNodeBackend(path.join(tmpDir, "node", `workflows-${++nodeFiles}.sqlite`), async () => {
      await warmUp();
      const batch = await concurrentBatch();
      const figures = throughputFigures(runs, steps, [batch]);
      return { batchMs: batch.ms, stepsPerSecond: figures.stepsPerSecond, cpuPerStepMs: figures.cpuPerStepMs };
    });
  };
  const measured = await interleavedPairs(BACKENDS, WORKLOADS.backendPairs, measure, (pair, i, sequence) =>
    progress(
      `pair ${i + 1}/${WORKLOADS.backendPairs} (${sequence.map((b) => LABELS[b]).join(" then ")}): Durable Objects ${Math.round(pair.durableObjects.stepsPerSecond)} steps/s, Node ${Math.round(pair.node.stepsPerSecond)} steps/s -> ${round(pair.durableObjects.stepsPerSecond / pair.node.stepsPerSecond, 2)}x`,
    ),
  );
  const pairs: BackendPair[] = measured.map(({ durableObjects, node }) => ({
    durableObjects,
    node,
    ratio: round(durableObjects.stepsPerSecond / node.stepsPerSecond, 2),
  }));
  return {
    runs,
    stepsPerRun: steps,
    order: pairOrder(pairs, BACKENDS, LABELS),
    pairs,
    ...ratioSpread(pairs.map((p) => p.ratio)),
    durableObjectsStepsPerSecond: round(median(pairs.map((p) => p.durableObjects.stepsPerSecond)), 0),
    nodeStepsPerSecond: round(median(pairs.map((p) => p.node.stepsPerSecond)), 0),
  };
}
