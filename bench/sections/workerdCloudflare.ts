import * as esbuild from "esbuild";
import path from "node:path";
import { COMPATIBILITY_DATE, COMPATIBILITY_FLAGS } from "#src/contracts/workerCompatibility.ts";
import { startWorker, type WorkerHost } from "../lib/miniflareHost.ts";
import { analyzeCycles, median, round } from "../lib/stats.ts";
import { WORKLOADS } from "../lib/workloads.ts";
import {
  flatnessFigures,
  flatnessPoint,
  longRunPoint,
  latencyFigures,
  longRunFigures,
  measureCpu,
  throughputFigures,
  type FlatnessFigures,
  type FlatnessPoint,
  type LatencyFigures,
  type LongRunFigures,
  type ThroughputFigures,
  warmedUp,
} from "./shared.ts";

const WORKER_SOURCE = path.join(import.meta.dirname, "..", "cf", "worker.js");

interface RunResponse {
  ms: number;
  stepAt: number[];
}

/** What creating one fresh SQLite-backed Durable Object and calling it once costs here, with no engine. */
export interface ActorFloor {
  actors: number;
  batchMs: number[];
  msPerActor: number;
  cpuMsPerActor: number | null;
}

export interface CloudflareFigures {
  engine: string;
  actorFloor: ActorFloor | null;
  longRun: LongRunFigures;
  throughput: ThroughputFigures;
  latency: LatencyFigures;
  flatness: FlatnessFigures;
  workerLogTail: string[];
}

const bundles = new Map<string, Promise<string>>();

/** bench/cf/worker.js bundled by esbuild into `tmpDir/cf-build`, once per `tmpDir`; returns the script's path. */
function bundleOnce(tmpDir: string): Promise<string> {
  let bundle = bundles.get(tmpDir);
  if (!bundle) {
    const scriptPath = path.join(tmpDir, "cf-build", "worker.js");
    bundle = esbuild
      .build({
        entryPoints: [WORKER_SOURCE],
        bundle: true,
        format: "esm",
        platform: "browser",
        target: "es2023",
        outfile: scriptPath,
        external: ["cloudflare:*"],
        logLevel: "silent",
      })
      .then(() => scriptPath);
    bundles.set(tmpDir, bundle);
  }
  return bundle;
}

/**
 * The fresh, warmed-up host section C gives every workload (w2 included): same
 * bundle, bindings and warm-up as for our engine. Also used by the head-to-head (section H).
 */
export async function startCloudflareW2Host(tmpDir: string, instance: number): Promise<WorkerHost> {
  const scriptPath = await bundleOnce(tmpDir);
  const host = await startWorker(
    {
      name: "bench-cloudflare-workflows",
      scriptPath,
      compatibilityDate: COMPATIBILITY_DATE,
      compatibilityFlags: [...COMPATIBILITY_FLAGS],
      durableObjects: { WAITER: { className: "Waiter" }, PROBE: { className: "Probe", useSQLite: true } },
      workflows: { BENCH: { name: "bench-trivial-steps", className: "BenchWorkflow" } },
    },
    path.join(tmpDir, `state-${instance}`),
  );
  // Warm-up, as for our engine (not recorded).
  return warmedUp(host);
}

/**
 * Section C: Cloudflare Workflows' local engine (Miniflare `workflows` binding)
 * on the same workloads, each in a fresh Miniflare after the same warm-up.
 */
export async function benchCloudflareWorkflows(
  tmpDir: string,
  progress: (line: string) => void,
): Promise<CloudflareFigures> {
  await bundleOnce(tmpDir);
  let instance = 0;
  const logTail: string[] = [];
  const withHost = async <T>(fn: (host: WorkerHost) => Promise<T>): Promise<T> => {
    const host = await startCloudflareW2Host(tmpDir, ++instance);
    try {
      return await fn(host);
    } finally {
      logTail.push(...host.logs.slice(-2));
      await host.dispose();
    }
  };
  const cpu = measureCpu;

  progress("workloads 1 and 4: runs of 1,000, 100 and 10 steps");
  const { longRun, flatness } = await withHost(async (host) => {
    const longRuns: LongRunFigures["runs"] = [];
    for (let i = 0; i < WORKLOADS.longRun.repeats; i++) {
      const { value, cpuMs } = await cpu(host, () =>
        host.call<RunResponse>(`/bench/run?steps=${WORKLOADS.longRun.steps}`),
      );
      longRuns.push({
        endToEndMs: value.ms,
        cycle: analyzeCycles({ starts: value.stepAt }, WORKLOADS.blockSize),
        cpuMs,
      });
    }
    const longRun = longRunFigures(WORKLOADS.longRun.steps, longRuns);
    const points: FlatnessPoint[] = [];
    for (const point of WORKLOADS.flatness) {
      if (point.runs === 0) {
        points.push(longRunPoint(longRun));
        continue;
      }
      const samples = [];
      for (let i = 0; i < point.runs; i++) {
        const run = await host.call<RunResponse>(`/bench/run?steps=${point.steps}`);
        samples.push({ endToEndMs: run.ms, times: { starts: run.stepAt } });
      }
      points.push(flatnessPoint(point.steps, samples));
    }
    return { longRun, flatness: flatnessFigures(points) };
  });

  progress("workload 2: concurrent runs");
  const throughput = await withHost(async (host) => {
    const { runs, steps, repeats } = WORKLOADS.concurrent;
    const rows: { ms: number; cpuMs: number | null; perRunMs: number[] }[] = [];
    for (let i = 0; i < repeats; i++) {
      const { value, cpuMs } = await cpu(host, () =>
        host.call<{ ms: number; perRun: number[] }>(`/bench/concurrent?runs=${runs}&steps=${steps}`),
      );
      rows.push({ ms: value.ms, cpuMs, perRunMs: value.perRun });
    }
    return throughputFigures(runs, steps, rows);
  });

  let actorFloor: ActorFloor | null = null;
  progress("workload 3: start → result latency");
  const latency = await withHost(async (host) => {
    const { samples } = await host.call<{
      samples: { ms: number; startMs: number; stepAt: number; returnedAt: number }[];
    }>(`/bench/latency?n=${WORKLOADS.latency.runs}`);
    const figures = latencyFigures(samples, {
      "create() returned": samples.map((s) => s.startMs),
      "step callback ran": samples.map((s) => s.stepAt),
      "run() returned": samples.map((s) => s.returnedAt),
      "result received": samples.map((s) => s.ms),
    });
    // After the latency samples (so they are not disturbed): the runtime's floor per actor.
    progress("runtime floor: fresh SQLite-backed Durable Objects, no engine");
    const probes: { ms: number; cpuMs: number | null }[] = [];
    for (let i = 0; i < 3; i++) {
      const { value, cpuMs } = await cpu(host, () =>
        host.call<{ ms: number }>(`/bench/actors?n=${WORKLOADS.concurrent.runs}`),
      );
      probes.push({ ms: value.ms, cpuMs });
    }
    const cpus = probes.map((p) => p.cpuMs).filter((c): c is number => c !== null);
    actorFloor = {
      actors: WORKLOADS.concurrent.runs,
      batchMs: probes.map((p) => p.ms),
      msPerActor: round(median(probes.map((p) => p.ms)) / WORKLOADS.concurrent.runs, 3),
      cpuMsPerActor: cpus.length ? round(median(cpus) / WORKLOADS.concurrent.runs, 3) : null,
    };
    return figures;
  });

  return {
    engine: "Cloudflare Workflows local engine (Miniflare workflows binding)",
    longRun,
    throughput,
    latency,
    flatness,
    actorFloor,
    workerLogTail: logTail.slice(-5),
  };
}
