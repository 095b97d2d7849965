import path from "node:path";
import { installNodeWorkflowBackend, workflow, type NodeWorkflowBackend } from "#src/runtime/node/index.ts";
import { ownCpuMs } from "../lib/processCpu.ts";
import { analyzeCycles, stepTimesFromEvents } from "../lib/stats.ts";
import { WORKLOADS } from "../lib/workloads.ts";
import {
  flatnessFigures,
  flatnessPoint,
  longRunPoint,
  latencyFigures,
  longRunFigures,
  throughputFigures,
  type FlatnessFigures,
  type FlatnessPoint,
  type LatencyFigures,
  type LongRunFigures,
  type ThroughputFigures,
} from "./shared.ts";

const MAX_STEPS = 1000;

export interface NodeFigures {
  engine: string;
  /** The backend's synchronous setting on its file, as read back (the setting `openSqliteWorkflowStore` makes). */
  synchronous: string;
  longRun: LongRunFigures;
  throughput: ThroughputFigures;
  latency: LatencyFigures;
  flatness: FlatnessFigures;
  /**
   * Diagnostic, not the backend's configuration: workloads 1 and 2 again on a
   * file switched to the other setting, PRAGMA synchronous = FULL (an fsync at
   * every commit), to show what that setting would cost.
   */
  diagnosticSynchronousFull: { synchronous: string; longRun: LongRunFigures; throughput: ThroughputFigures };
}

let chainRegistered = false;

/** The same "chain" workflow as the bench project: N trivial steps, nothing written. */
function registerChainOnce(): void {
  if (chainRegistered) return;
  chainRegistered = true;
  const steps: Record<string, (ctx: { data: { steps: number } }) => { step: string } | { done: true; result: number }> =
    {
      start: (ctx) =>
        ctx.data.steps <= 1 ? { done: true, result: 1 } : { step: `s${MAX_STEPS - ctx.data.steps + 2}` },
    };
  for (let k = 2; k <= MAX_STEPS; k++) {
    steps[`s${k}`] = k < MAX_STEPS ? () => ({ step: `s${k + 1}` }) : () => ({ done: true, result: MAX_STEPS });
  }
  workflow("chain", steps, { maxAttempts: 3, stepTimeoutMS: 60_000 });
}

type Event = [number, string, number];

async function timedRun(steps: number) {
  const t0 = performance.now();
  const run = await workflow.start("chain", { steps });
  const started = performance.now();
  await run.result();
  const t1 = performance.now();
  return { runId: run.id, ms: t1 - t0, startMs: started - t0 };
}

async function eventsOf(runId: string): Promise<Event[]> {
  const view = await workflow.get(runId);
  if (!view) throw new Error(`run ${runId} vanished`);
  return view.events.map((e) => [e.seq, e.type, e.at]);
}

/**
 * Section B: the Node backend (node:sqlite on a temp file, zero-delay timer
 * loop) in this process, as configured; then the other synchronous setting as
 * a diagnostic.
 */
export async function benchNodeBackend(tmpDir: string, progress: (line: string) => void): Promise<NodeFigures> {
  const configured = await withNodeBackend(path.join(tmpDir, "node", "workflows.sqlite"), async (backend) => ({
    synchronous: synchronousName(backend),
    ...(await runWorkloads(progress)),
  }));

  progress("diagnostic: workloads 1 and 2 with PRAGMA synchronous = FULL");
  const diagnosticSynchronousFull = await withNodeBackend(
    path.join(tmpDir, "node-full", "workflows.sqlite"),
    async (backend) => {
      backend.store.db.exec("PRAGMA synchronous = FULL");
      await warmUp();
      return {
        synchronous: synchronousName(backend),
        longRun: await longRunWorkload(),
        throughput: await throughputWorkload(),
      };
    },
  );
  return { ...configured, diagnosticSynchronousFull };
}

/**
 * Runs `fn` with a Node backend on `file` installed as `platform`'s workflow
 * backend (the bench's "chain" workflow registered), then closes it.
 */
export async function withNodeBackend<T>(file: string, fn: (backend: NodeWorkflowBackend) => Promise<T>): Promise<T> {
  registerChainOnce();
  const backend = installNodeWorkflowBackend({ path: file, log: () => {} });
  try {
    return await fn(backend);
  } finally {
    await backend.close();
  }
}

/** The warm-up every engine's fresh host gets (not recorded): one 200-step run, five 1-step runs. */
export async function warmUp(): Promise<void> {
  await timedRun(200);
  for (let i = 0; i < 5; i++) await timedRun(1);
}

function synchronousName(backend: NodeWorkflowBackend): string {
  const row = backend.store.db.prepare("PRAGMA synchronous").get() as { synchronous: number } | undefined;
  const names = ["OFF", "NORMAL", "FULL", "EXTRA"];
  return row ? (names[row.synchronous] ?? String(row.synchronous)) : "?";
}

const cpuOf = async <T>(fn: () => Promise<T>) => {
  const before = ownCpuMs();
  const value = await fn();
  return { value, cpuMs: ownCpuMs() - before };
};

async function longRunWorkload(): Promise<LongRunFigures> {
  const longRuns: LongRunFigures["runs"] = [];
  for (let i = 0; i < WORKLOADS.longRun.repeats; i++) {
    const { value, cpuMs } = await cpuOf(() => timedRun(WORKLOADS.longRun.steps));
    longRuns.push({
      endToEndMs: value.ms,
      cycle: analyzeCycles(stepTimesFromEvents(await eventsOf(value.runId)), WORKLOADS.blockSize),
      cpuMs,
    });
  }
  return longRunFigures(WORKLOADS.longRun.steps, longRuns);
}

/** ONE workload-2 batch on the installed backend: all runs started at once, all results awaited. */
export async function concurrentBatch(): Promise<{ ms: number; cpuMs: number | null; perRunMs: number[] }> {
  const { runs, steps } = WORKLOADS.concurrent;
  const { value, cpuMs } = await cpuOf(async () => {
    const t0 = performance.now();
    const each = await Promise.all(Array.from({ length: runs }, () => timedRun(steps)));
    return { ms: performance.now() - t0, perRun: each.map((r) => r.ms) };
  });
  return { ms: value.ms, cpuMs, perRunMs: value.perRun };
}

async function throughputWorkload(): Promise<ThroughputFigures> {
  const { runs, steps, repeats } = WORKLOADS.concurrent;
  const batches: { ms: number; cpuMs: number | null; perRunMs: number[] }[] = [];
  for (let i = 0; i < repeats; i++) batches.push(await concurrentBatch());
  return throughputFigures(runs, steps, batches);
}

async function runWorkloads(
  progress: (line: string) => void,
): Promise<Omit<NodeFigures, "diagnosticSynchronousFull" | "synchronous">> {
  await warmUp();

  progress("workload 1: 1,000-step runs");
  const longRun = await longRunWorkload();

  progress("workload 2: concurrent runs");
  const throughput = await throughputWorkload();

  progress("workload 3: start → result() latency");
  const samples: { ms: number; startMs: number }[] = [];
  for (let i = 0; i < WORKLOADS.latency.runs; i++) samples.push(await timedRun(1));
  const latency = latencyFigures(samples);

  progress("workload 4: flatness at 10 / 100 / 1,000 steps");
  const points: FlatnessPoint[] = [];
  for (const point of WORKLOADS.flatness) {
    if (point.runs === 0) {
      points.push(longRunPoint(longRun));
      continue;
    }
    const runsAtLength = [];
    for (let i = 0; i < point.runs; i++) {
      const run = await timedRun(point.steps);
      runsAtLength.push({ endToEndMs: run.ms, times: stepTimesFromEvents(await eventsOf(run.runId)) });
    }
    points.push(flatnessPoint(point.steps, runsAtLength));
  }

  return {
    engine: "Node backend (createNodeWorkflowBackend, node:sqlite file in a temp dir)",
    longRun,
    throughput,
    latency,
    flatness: flatnessFigures(points),
  };
}
