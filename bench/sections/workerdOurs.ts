import * as esbuild from "esbuild";
import path from "node:path";
import { buildProject } from "#src/dev/cli/build/buildProject.ts";
import { COMPATIBILITY_DATE, COMPATIBILITY_FLAGS } from "#src/contracts/workerCompatibility.ts";
import { startWorker, type WorkerHost } from "../lib/miniflareHost.ts";
import { analyzeCycles, median, round, stepTimesFromEvents, summarize } from "../lib/stats.ts";
import { WORKLOADS } from "../lib/workloads.ts";
import {
  flatnessFigures,
  flatnessPoint,
  longRunPoint,
  latencyFigures,
  longRunFigures,
  measureCpu,
  roundSummary,
  throughputFigures,
  type FlatnessFigures,
  type FlatnessPoint,
  type LatencyFigures,
  type LongRunFigures,
  type ThroughputFigures,
  warmedUp,
} from "./shared.ts";

const PROJECT_DIR = path.join(import.meta.dirname, "..", "projects", "workflows");
const SCRIPT_NAME = "bench-workflows";
// A bench-only secret and project id: the internal cron route checks tokens signed with them.
const WORKER_SECRET = "b".repeat(64);
const PROJECT_ID = "4242";

type Event = [number, string, number];
interface RunResponse {
  runId: string;
  t0: number;
  started: number;
  t1: number;
  ms: number;
  events: Event[];
}

export interface SweepPoint {
  label: string;
  activeRuns: number;
  totalRuns: number;
  totalEvents: number;
  /** Inside the worker: the internal cron request, token checked, sweep run, answer read. */
  ms: { median: number; p95: number; min: number; max: number; n: number; mean: number };
  cpuMsPerSweep: number | null;
  output: string;
}

export interface OursWorkerdFigures {
  longRun: LongRunFigures;
  throughput: ThroughputFigures;
  latency: LatencyFigures;
  flatness: FlatnessFigures;
  sweep: { points: SweepPoint[]; perActiveRunMs: number; perThousandEventsMs: number };
  bundleBytes: number;
  workerLogTail: string[];
}

type Build = Awaited<ReturnType<typeof buildProject>>;
const builds = new Map<string, Promise<Build>>();

/** The bench project bundled by buildProject into `tmpDir/build`, once per `tmpDir`. */
function buildOnce(tmpDir: string): Promise<Build> {
  let build = builds.get(tmpDir);
  if (!build) {
    build = buildProject(PROJECT_DIR, path.join(tmpDir, "build")).then((b) => {
      if (!b.capabilities.workflow) throw new Error("The bench project did not pull in the workflow capability");
      return b;
    });
    builds.set(tmpDir, build);
  }
  return build;
}

const PLATFORM_ENTRY = path.join(import.meta.dirname, "..", "projects", "platform", "index.ts");
/** The bench's stand-in for the platform's API worker (its live-run routes and the real budget actor). */
export const PLATFORM_WORKER = "bench-platform";
const platformBuilds = new Map<string, Promise<string>>();

/** bench/projects/platform bundled into `tmpDir/platform`, once per `tmpDir`. */
function buildPlatformOnce(tmpDir: string): Promise<string> {
  let build = platformBuilds.get(tmpDir);
  if (!build) {
    const outfile = path.join(tmpDir, "platform", "index.js");
    build = esbuild
      .build({
        entryPoints: [PLATFORM_ENTRY],
        outfile,
        bundle: true,
        format: "esm",
        platform: "neutral",
        target: "es2022",
        external: ["cloudflare:*"],
        logLevel: "silent",
      })
      .then(() => outfile);
    platformBuilds.set(tmpDir, build);
  }
  return build;
}

/**
 * A fresh Miniflare on the bundled project, state in `tmpDir/state-<instance>`, not warmed up. With
 * `platform`, the project's starts and ends also go through the account's live-run budget, as under
 * the platform (`PLATFORM_API` bound to the bench's stand-in of the API worker).
 */
async function startOursHost(tmpDir: string, instance: number, { platform = false } = {}): Promise<WorkerHost> {
  const build = await buildOnce(tmpDir);
  const companions = platform
    ? [
        {
          name: PLATFORM_WORKER,
          scriptPath: await buildPlatformOnce(tmpDir),
          compatibilityDate: COMPATIBILITY_DATE,
          compatibilityFlags: [...COMPATIBILITY_FLAGS],
          bindings: { PROJECT_ID, PROJECT_SECRET: WORKER_SECRET },
          durableObjects: { LIVE_RUN_BUDGET: { className: "LiveRunBudget", useSQLite: true } },
        },
      ]
    : [];
  return startWorker(
    {
      name: SCRIPT_NAME,
      scriptPath: build.bundlePath,
      compatibilityDate: COMPATIBILITY_DATE,
      compatibilityFlags: [...COMPATIBILITY_FLAGS],
      bindings: {
        PLATFORM_WORKER_SECRET: WORKER_SECRET,
        PLATFORM_PROJECT_ID: PROJECT_ID,
        PLATFORM_PROJECT_SLUG: "bench",
        PLATFORM_LOCAL: "1",
      },
      // The sweep route calls the project's own internal cron route, the way the platform's scheduler does.
      serviceBindings: { SELF: SCRIPT_NAME, ...(platform ? { PLATFORM_API: PLATFORM_WORKER } : {}) },
      durableObjects: {
        WORKFLOW_RUNS: { className: "WorkflowRun", useSQLite: true },
        WORKFLOW_RUN_INDEX: { className: "WorkflowRunIndex", useSQLite: true },
        WORKFLOW_FLOW_KEYS: { className: "WorkflowFlowKey", useSQLite: true },
      },
    },
    path.join(tmpDir, `state-${instance}`),
    companions,
  );
}

/**
 * The fresh, warmed-up host section A gives workloads 1–4 (w2 included): same
 * build, bindings and warm-up. Also used by the head-to-head (section H).
 */
export async function startOursW2Host(
  tmpDir: string,
  instance: number,
  options?: { platform?: boolean },
): Promise<WorkerHost> {
  return warmedUp(await startOursHost(tmpDir, instance, options));
}

/**
 * Section A: our WorkflowRun actors in workerd, through Miniflare, on a
 * project bundled by buildProject. Each workload gets a fresh Miniflare (fresh
 * state, warmed up first), so no workload pays for actors another left behind.
 */
export async function benchOursInWorkerd(
  tmpDir: string,
  progress: (line: string) => void,
): Promise<OursWorkerdFigures> {
  const build = await buildOnce(tmpDir);
  let instance = 0;
  const logTail: string[] = [];
  /** Workloads 1–4 get a warmed-up host; the sweep (workload 5) starts from a bare one. */
  const withHost = async <T>(fn: (host: WorkerHost) => Promise<T>, warmUp = true): Promise<T> => {
    const host = warmUp ? await startOursW2Host(tmpDir, ++instance) : await startOursHost(tmpDir, ++instance);
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
    const longRunResponses: RunResponse[] = [];
    for (let i = 0; i < WORKLOADS.longRun.repeats; i++) {
      const { value, cpuMs } = await cpu(host, () =>
        host.call<RunResponse>(`/bench/run?steps=${WORKLOADS.longRun.steps}`),
      );
      longRunResponses.push(value);
      longRuns.push({
        endToEndMs: value.ms,
        cycle: analyzeCycles(stepTimesFromEvents(value.events), WORKLOADS.blockSize),
        cpuMs,
      });
    }
    const longRun: LongRunFigures = {
      ...longRunFigures(WORKLOADS.longRun.steps, longRuns),
      startToFirstStepMs: round(
        median(longRunResponses.map((r) => stepTimesFromEvents(r.events).starts[0]! - r.t0)),
        1,
      ),
      terminalToResultMs: round(median(longRunResponses.map((r) => r.t1 - r.events[r.events.length - 1]![2])), 1),
    };
    const points: FlatnessPoint[] = [];
    for (const point of WORKLOADS.flatness) {
      if (point.runs === 0) {
        points.push(longRunPoint(longRun));
        continue;
      }
      const samples = [];
      for (let i = 0; i < point.runs; i++) {
        const run = await host.call<RunResponse>(`/bench/run?steps=${point.steps}`);
        samples.push({ endToEndMs: run.ms, times: stepTimesFromEvents(run.events) });
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

  progress("workload 3: start → result() latency");
  const latency = await withHost(async (host) => {
    const { samples } = await host.call<{
      samples: { ms: number; startMs: number; t0: number; t1: number; events: [string, number][] }[];
    }>(`/bench/latency?n=${WORKLOADS.latency.runs}&events=1`);
    const parts: Record<string, number[]> = {
      "start call returned": [],
      "workflow_created written": [],
      "first step_started": [],
      "workflow_completed written": [],
      "result() resolved": [],
    };
    for (const s of samples) {
      const at = (type: string) => s.events.find(([t]) => t === type)![1] - s.t0;
      parts["start call returned"]!.push(s.startMs);
      parts["workflow_created written"]!.push(at("workflow_created"));
      parts["first step_started"]!.push(at("step_started"));
      parts["workflow_completed written"]!.push(at("workflow_completed"));
      parts["result() resolved"]!.push(s.t1 - s.t0);
    }
    return latencyFigures(samples, parts);
  });

  progress("workload 5: recovery sweep vs active runs and total events");
  const sweep = await withHost((host) => sweepWorkload(host, cpu), false);

  return {
    longRun,
    throughput,
    latency,
    flatness,
    sweep,
    bundleBytes: build.bundleBytes,
    workerLogTail: logTail.slice(-5),
  };
}

async function sweepWorkload(host: WorkerHost, cpu: typeof measureCpu): Promise<OursWorkerdFigures["sweep"]> {
  let totalRuns = 0;
  let totalEvents = 0;
  const points: SweepPoint[] = [];
  const sweep = async (label: string, activeRuns: number) => {
    const { value, cpuMs } = await cpu(host, () =>
      host.call<{ samples: { ms: number; output: string }[] }>(`/bench/sweep?times=${WORKLOADS.sweepRepeats}`),
    );
    const point: SweepPoint = {
      label,
      activeRuns,
      totalRuns,
      totalEvents,
      ms: roundSummary(summarize(value.samples.map((s) => s.ms))),
      cpuMsPerSweep: cpuMs === null ? null : round(cpuMs / value.samples.length, 1),
      output: value.samples[value.samples.length - 1]!.output,
    };
    points.push(point);
    return point;
  };
  const chain = async (runs: number, steps: number, concurrently: boolean) => {
    if (concurrently) await host.call(`/bench/concurrent?runs=${runs}&steps=${steps}`);
    else for (let i = 0; i < runs; i++) await host.call<RunResponse>(`/bench/run?steps=${steps}`);
    totalRuns += runs;
    totalEvents += runs * (2 * steps + 2);
  };

  await host.call("/bench/ping");
  await sweep("warm-up (not used)", 0);
  points.length = 0;
  const empty = await sweep("empty project", 0);
  await chain(WORKLOADS.sweepLog.manyRuns, WORKLOADS.sweepLog.manyRunsSteps, true);
  await sweep(`+${WORKLOADS.sweepLog.manyRuns} done runs x ${WORKLOADS.sweepLog.manyRunsSteps} steps`, 0);
  await chain(WORKLOADS.sweepLog.longRuns, WORKLOADS.sweepLog.longRunsSteps, false);
  const manyEvents = await sweep(
    `+${WORKLOADS.sweepLog.longRuns} done runs x ${WORKLOADS.sweepLog.longRunsSteps} steps`,
    0,
  );
  let active = 0;
  for (const target of WORKLOADS.sweepActive) {
    await host.call(`/bench/park?count=${target - active}`);
    totalRuns += target - active;
    totalEvents += 2 * (target - active);
    active = target;
    await sweep(`${active} active runs (step in flight)`, active);
  }
  const busiest = points[points.length - 1]!;
  return {
    points,
    perActiveRunMs: round((busiest.ms.median - manyEvents.ms.median) / busiest.activeRuns, 3),
    perThousandEventsMs: round(((manyEvents.ms.median - empty.ms.median) / manyEvents.totalEvents) * 1000, 4),
  };
}
