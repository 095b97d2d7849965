import { setTimeout as sleep } from "node:timers/promises";
import type { WorkerHost } from "../lib/miniflareHost.ts";
import { workerdPids } from "../lib/processCpu.ts";
import { memoryOf, openFilesLimitOf, openFilesOf, type ProcessMemory } from "../lib/processMemory.ts";
import { median, round } from "../lib/stats.ts";
import { WORKLOADS } from "../lib/workloads.ts";
import { measureCpu } from "./shared.ts";
import { startOursW2Host } from "./workerdOurs.ts";

/**
 * Section L: our engine at scale, in workerd, on the bench project hosted
 * exactly as section A hosts it (`startOursW2Host`: same build, bindings,
 * warm-up). Two fresh Miniflares, so each one's peak resident set (VmHWM) is
 * that measurement's own: a burst of 1-step runs, then parked runs with the
 * recovery sweep timed against the number of active runs.
 */

/** Files a live SQLite-backed actor holds open in workerd (the database, its -wal, its -shm): the burst's guard. */
const FILES_PER_ACTOR = 3;
/** A burst request waits while the actors it and the other requests in flight may open would pass this share of the limit. */
const FILES_HEADROOM = 0.9;
/** The warm-up's runs (one 200-step run, five 1-step runs), already in each host's log. */
const WARM_UP_RUNS = 6;

export interface BurstFigures {
  runs: number;
  batch: number;
  inFlight: number;
  /** Worker clock: the first request's first start call → the last start call returned. */
  startAllMs: number;
  /** Worker clock: the first start call → the last `result()` resolved. */
  allResultsMs: number;
  /** Node: the first request sent → the last answer read. */
  nodeWallMs: number;
  runsPerSecond: number;
  cpuMs: number | null;
  cpuMsPerRun: number | null;
  /** Before: after the warm-up. After: `peakRssMiB` is the host's peak, burst included. */
  memory: { before: ProcessMemory | null; after: ProcessMemory | null };
  openFiles: { before: number | null; peak: number | null; limit: number | null };
  /** Requests held back by the open-files guard, and the total time they waited (summed over requests). */
  heldBack: { requests: number; ms: number };
}

export interface SweepPoint {
  label: string;
  host: "burst" | "parked";
  activeRuns: number;
  finishedRuns: number;
  /** The run actors had been evicted before (the sweep loads each one); else they were live. */
  cold: boolean;
  samples: number[];
  firstMs: number;
  medianMs: number;
  cpuMsPerSweep: number | null;
  /** (median − the parked host's median with 0 active runs) ÷ active runs. */
  perActiveRunMs: number | null;
}

export interface ParkedFigures {
  sleepers: number;
  waiters: number;
  parkMS: number;
  /** Worker clock: all `workflow.start` calls of one request → the last returned (each run parked by then). */
  parkMs: number;
  memory: { before: ProcessMemory | null; afterParking: ProcessMemory | null; atEnd: ProcessMemory | null };
  /** Resident set added per parked run (its live actor), MiB. */
  rssMiBPerParkedRun: number | null;
  openFiles: { before: number | null; afterParking: number | null; limit: number | null };
  filesPerLiveActor: number | null;
  /** How many run actors one workerd can keep live before its open-files limit: (limit − before) ÷ files per actor. */
  liveActorCap: number | null;
  /** Seconds until workerd had evicted the parked actors (their files closed), before the cold sweep. */
  evictedAfterS: number | null;
  wake: { woken: number; sendMs: number; doneMs: number };
  cancel: { cancelled: number; ms: number };
}

export interface ScaleFigures {
  burst: BurstFigures;
  parked: ParkedFigures;
  sweep: {
    points: SweepPoint[];
    /** Least squares over the parked host's hot points: median ms = intercept + slope × active runs. */
    fit: { slopeMsPerActiveRun: number; interceptMs: number; r2: number };
  };
}

interface Host {
  host: WorkerHost;
  pids: number[];
}

/** A fresh host started as section A starts one, with the workerd processes it added. */
async function freshHost(tmpDir: string, instance: number): Promise<Host> {
  const before = new Set(workerdPids());
  const host = await startOursW2Host(tmpDir, instance);
  return { host, pids: workerdPids().filter((pid) => !before.has(pid)) };
}

async function withHost<T>(tmpDir: string, instance: number, fn: (h: Host) => Promise<T>): Promise<T> {
  const h = await freshHost(tmpDir, instance);
  try {
    return await fn(h);
  } finally {
    await h.host.dispose();
  }
}

/** The recovery sweep through the project's real internal cron route, `times` times in a row. */
async function timeSweeps(
  { host }: Host,
  point: Omit<SweepPoint, "samples" | "firstMs" | "medianMs" | "cpuMsPerSweep" | "perActiveRunMs">,
  times: number = WORKLOADS.scale.sweepRepeats,
): Promise<SweepPoint> {
  const { value, cpuMs } = await measureCpu(host, () =>
    host.call<{ samples: { ms: number }[] }>(`/bench/sweep?times=${times}`),
  );
  const samples = value.samples.map((s) => s.ms);
  return {
    ...point,
    samples,
    firstMs: samples[0]!,
    medianMs: median(samples),
    cpuMsPerSweep: cpuMs === null ? null : round(cpuMs / times, 1),
    perActiveRunMs: null,
  };
}

/** Waits (bounded) until the index lists `expected` running runs; throws otherwise. */
async function untilRunning({ host }: Host, expected: number): Promise<void> {
  const deadline = performance.now() + 15_000;
  for (;;) {
    const { running } = await host.call<{ running: number }>("/bench/running");
    if (running === expected) return;
    if (performance.now() > deadline) throw new Error(`the index lists ${running} running runs, expected ${expected}`);
    await sleep(100);
  }
}

/**
 * `burst` 1-step runs: requests of `batch` runs (each starts its runs together,
 * then awaits all their results) sent from Node, `inFlight` at a time. One
 * request cannot start them all: workerd keeps every actor a request touched
 * open until that request ends (3 files each), so a request's runs are capped
 * by the open-files limit; requests that ended release theirs ~10 s later.
 */
async function burst(h: Host): Promise<BurstFigures> {
  const { host, pids } = h;
  const { burst: runs, batch, inFlight } = WORKLOADS.scale;
  const limit = openFilesLimitOf(pids);
  const filesBefore = openFilesOf(pids);
  const memoryBefore = memoryOf(pids);
  let peakFiles = filesBefore;
  const sampleFiles = () => {
    const open = openFilesOf(pids);
    if (open !== null) peakFiles = Math.max(peakFiles ?? 0, open);
    return open;
  };
  const sampler = setInterval(sampleFiles, 250);
  const heldBack = { requests: 0, ms: 0 };
  const answers: { t0: number; t1: number; t2: number }[] = [];
  let queued = 0;
  const sender = async () => {
    while (queued < runs) {
      const size = Math.min(batch, runs - queued);
      queued += size;
      // Guard: wait while the actors of every request in flight could push workerd past its open-files limit.
      const heldFrom = performance.now();
      let held = false;
      for (;;) {
        const open = sampleFiles();
        if (open === null || limit === null || open + inFlight * batch * FILES_PER_ACTOR <= FILES_HEADROOM * limit)
          break;
        held = true;
        await sleep(100);
      }
      if (held) {
        heldBack.requests++;
        heldBack.ms += performance.now() - heldFrom;
      }
      answers.push(await host.call<{ t0: number; t1: number; t2: number }>(`/bench/burst?runs=${size}`));
    }
  };
  const began = performance.now();
  try {
    const { cpuMs } = await measureCpu(host, () => Promise.all(Array.from({ length: inFlight }, sender)));
    const nodeWallMs = performance.now() - began;
    const first = Math.min(...answers.map((a) => a.t0));
    const allResultsMs = Math.max(...answers.map((a) => a.t2)) - first;
    return {
      runs,
      batch,
      inFlight,
      startAllMs: Math.max(...answers.map((a) => a.t1)) - first,
      allResultsMs,
      nodeWallMs: round(nodeWallMs, 0),
      runsPerSecond: round(runs / (allResultsMs / 1000), 0),
      cpuMs: cpuMs === null ? null : round(cpuMs, 0),
      cpuMsPerRun: cpuMs === null ? null : round(cpuMs / runs, 2),
      memory: { before: memoryBefore, after: memoryOf(pids) },
      openFiles: { before: filesBefore, peak: peakFiles, limit },
      heldBack: { requests: heldBack.requests, ms: round(heldBack.ms, 0) },
    };
  } finally {
    clearInterval(sampler);
  }
}

/** Waits (bounded) until workerd has closed the files of idle actors; seconds waited, or null if it did not. */
async function untilEvicted({ pids }: Host, files: number): Promise<number | null> {
  const began = performance.now();
  while (performance.now() - began < 30_000) {
    const open = openFilesOf(pids);
    if (open === null) return null;
    if (open <= files) return round((performance.now() - began) / 1000, 1);
    await sleep(250);
  }
  return null;
}

/** Least squares fit y = a + b·x, with R². */
function fitLine(points: readonly { x: number; y: number }[]): { slope: number; intercept: number; r2: number } {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const sxy = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  const syy = points.reduce((s, p) => s + (p.y - my) ** 2, 0);
  const slope = sxy / sxx;
  return { slope, intercept: my - slope * mx, r2: syy === 0 ? 1 : (sxy * sxy) / (sxx * syy) };
}

export async function benchScale(tmpDir: string, progress: (line: string) => void): Promise<ScaleFigures> {
  const { burst: burstRuns, batch, inFlight, parked, intermediate, parkMS } = WORKLOADS.scale;
  const points: SweepPoint[] = [];

  progress(`${burstRuns} 1-step runs: requests of ${batch} from Node, ${inFlight} in flight`);
  const burstFigures = await withHost(tmpDir, 1, async (h) => {
    const figures = await burst(h);
    await untilRunning(h, 0);
    await timeSweeps(h, { label: "warm-up (not used)", host: "burst", activeRuns: 0, finishedRuns: 0, cold: false });
    points.push(
      await timeSweeps(h, {
        label: "0 active, after the burst",
        host: "burst",
        activeRuns: 0,
        finishedRuns: burstRuns + WARM_UP_RUNS,
        cold: false,
      }),
    );
    return figures;
  });

  progress(`${parked} parked runs and the recovery sweep against active runs`);
  const parkedFigures = await withHost(tmpDir, 2, async (h) => {
    const { host, pids } = h;
    const sleepers = Math.floor(parked / 2);
    const waiters = parked - sleepers;
    const sweepPoint = async (label: string, activeRuns: number, finishedRuns: number, cold = false) => {
      await untilRunning(h, activeRuns);
      const point = await timeSweeps(
        h,
        { label, host: "parked", activeRuns, finishedRuns, cold },
        cold ? 1 : undefined,
      );
      points.push(point);
      return point;
    };
    const filesBefore = openFilesOf(pids);
    const memoryBefore = memoryOf(pids);
    await timeSweeps(h, { label: "warm-up (not used)", host: "parked", activeRuns: 0, finishedRuns: 0, cold: false });
    await sweepPoint("0 active", 0, WARM_UP_RUNS);

    const { parkMs } = await host.call<{ parkMs: number }>(
      `/bench/idle?sleepers=${sleepers}&waiters=${waiters}&parkMS=${parkMS}`,
    );
    const afterParking = memoryOf(pids);
    const filesAfterParking = openFilesOf(pids);
    await sweepPoint(`${n(parked)} parked`, parked, WARM_UP_RUNS);

    // Cold: one sweep once every parked actor is evicted (idle ~10 s in workerd), so it wakes each one.
    const evictedAfterS = filesBefore === null ? null : await untilEvicted(h, filesBefore);
    if (evictedAfterS !== null)
      await sweepPoint(`${n(parked)} parked, actors evicted (1 sweep)`, parked, WARM_UP_RUNS, true);

    const wake = await host.call<ParkedFigures["wake"]>("/bench/wake");
    if (wake.woken !== waiters) throw new Error(`woke ${wake.woken} waiting runs, expected ${waiters}`);
    await sweepPoint(`${sleepers} sleeping (waiters woken)`, sleepers, WARM_UP_RUNS + waiters);
    const cancel = await host.call<ParkedFigures["cancel"]>(
      `/bench/cancel?name=sleeper&count=${sleepers - intermediate}`,
    );
    await sweepPoint(
      `${intermediate} sleeping (others cancelled)`,
      intermediate,
      WARM_UP_RUNS + waiters + cancel.cancelled,
    );

    const filesPerLiveActor =
      filesBefore === null || filesAfterParking === null ? null : round((filesAfterParking - filesBefore) / parked, 2);
    const limit = openFilesLimitOf(pids);
    const figures: ParkedFigures = {
      sleepers,
      waiters,
      parkMS,
      parkMs,
      memory: { before: memoryBefore, afterParking, atEnd: memoryOf(pids) },
      rssMiBPerParkedRun:
        memoryBefore && afterParking ? round((afterParking.rssMiB - memoryBefore.rssMiB) / parked, 3) : null,
      openFiles: { before: filesBefore, afterParking: filesAfterParking, limit },
      filesPerLiveActor,
      liveActorCap:
        limit === null || filesBefore === null || !filesPerLiveActor
          ? null
          : Math.floor((limit - filesBefore) / filesPerLiveActor),
      evictedAfterS,
      wake: { woken: wake.woken, sendMs: wake.sendMs, doneMs: wake.doneMs },
      cancel: { cancelled: cancel.cancelled, ms: cancel.ms },
    };
    return figures;
  });

  // ms per active run, against the parked host's sweep with none (same host, same completed-run log size).
  const base = points.find((p) => p.host === "parked" && p.activeRuns === 0)!;
  for (const p of points)
    if (p.activeRuns > 0) p.perActiveRunMs = round((p.medianMs - base.medianMs) / p.activeRuns, 3);
  const hot = points.filter((p) => p.host === "parked" && !p.cold);
  const fit = fitLine(hot.map((p) => ({ x: p.activeRuns, y: p.medianMs })));
  return {
    burst: burstFigures,
    parked: parkedFigures,
    sweep: {
      points,
      fit: { slopeMsPerActiveRun: round(fit.slope, 4), interceptMs: round(fit.intercept, 2), r2: round(fit.r2, 3) },
    },
  };
}

const n = (v: number | null | undefined) => (v === null || v === undefined ? "n/a" : v.toLocaleString("en-US"));
const s = (ms: number) => `${round(ms / 1000, 1)} s`;
const duration = (ms: number) => (ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : s(ms));
const mib = (m: ProcessMemory | null | undefined, field: keyof ProcessMemory) => (m ? `${n(m[field])} MiB` : "n/a");

export function formatScale(figures: ScaleFigures | { error: string }): string {
  if ("error" in figures) return `L. Scale: FAILED (${figures.error})`;
  const { burst: b, parked: p, sweep } = figures;
  const lines = [
    "L. Scale (ours in workerd, bench/projects/workflows hosted as in section A; a fresh Miniflare per part)",
    `  ${n(b.runs)} 1-step runs "at once": ${b.runs / b.batch} requests from Node of ${b.batch} runs each (a request starts its runs together, then awaits their results), ${b.inFlight} requests in flight (≤ ${n(b.batch * b.inFlight)} starts in flight)`,
    `    all started ${s(b.startAllMs)}, all results in ${s(b.allResultsMs)} (worker clock; Node ${s(b.nodeWallMs)}): ${n(b.runsPerSecond)} runs/s (a 1-step run has finished when its start call returns)`,
    `    workerd CPU ${b.cpuMs === null ? "n/a" : s(b.cpuMs)} (${b.cpuMsPerRun ?? "n/a"} ms/run); workerd RSS before ${mib(b.memory.before, "rssMiB")}, peak ${mib(b.memory.after, "peakRssMiB")}, after ${mib(b.memory.after, "rssMiB")}`,
    `    workerd open files: peak ${n(b.openFiles.peak)} of its limit ${n(b.openFiles.limit)}; requests held back by the open-files guard: ${b.heldBack.requests} (${s(b.heldBack.ms)})`,
    `  ${n(p.sleepers + p.waiters)} parked runs (${n(p.sleepers)} sleeping, ${n(p.waiters)} waiting for an event, ${duration(p.parkMS)} away), all started in one request:`,
    `    parked in ${s(p.parkMs)} (${round(p.parkMs / (p.sleepers + p.waiters), 2)} ms/run); workerd RSS before ${mib(p.memory.before, "rssMiB")}, after parking ${mib(p.memory.afterParking, "rssMiB")} (${p.rssMiBPerParkedRun ?? "n/a"} MiB per parked run), peak over this part ${mib(p.memory.atEnd, "peakRssMiB")}`,
    `    ${p.filesPerLiveActor ?? "n/a"} open files per live run actor: one workerd keeps at most ~${n(p.liveActorCap)} run actors live (open-files limit ${n(p.openFiles.limit)}); idle actors evicted after ${p.evictedAfterS ?? "n/a"} s`,
    `    woke the ${n(p.wake.woken)} waiting runs (workflow.send): sent in ${s(p.wake.sendMs)}, all completed in ${s(p.wake.doneMs)}; cancelled ${n(p.cancel.cancelled)} sleeping runs in ${s(p.cancel.ms)}`,
    `  recovery sweep (the project's /__cron/__workflow-recovery route), ${sweep.points[0]?.samples.length ?? 0} sweeps in a row per point:`,
    `    ${"point".padEnd(40)} ${"host".padEnd(7)} ${"active".padStart(6)} ${"finished".padStart(9)} ${"median".padStart(8)} ${"first".padStart(7)} ${"cpu/sweep".padStart(9)} ${"ms/active run".padStart(13)}`,
  ];
  for (const pt of sweep.points) {
    lines.push(
      `    ${pt.label.padEnd(40)} ${pt.host.padEnd(7)} ${n(pt.activeRuns).padStart(6)} ${n(pt.finishedRuns).padStart(9)} ${`${pt.medianMs} ms`.padStart(8)} ${`${pt.firstMs} ms`.padStart(7)} ${(pt.cpuMsPerSweep === null ? "n/a" : `${pt.cpuMsPerSweep} ms`).padStart(9)} ${(pt.perActiveRunMs === null ? "" : `${pt.perActiveRunMs} ms`).padStart(13)}`,
    );
  }
  const { fit } = sweep;
  const live = sweep.points.filter((pt) => pt.host === "parked" && !pt.cold && pt.perActiveRunMs !== null);
  live.sort((x, y) => x.activeRuns - y.activeRuns);
  const idle = sweep.points.filter((pt) => pt.activeRuns === 0);
  lines.push(
    `    with 0 active runs: ${idle.map((pt) => `${pt.medianMs} ms with ${n(pt.finishedRuns)} finished runs (${pt.host} host)`).join(", ")}`,
    `    ms per active run at ${live.map((pt) => n(pt.activeRuns)).join(" / ")}: ${live.map((pt) => pt.perActiveRunMs).join(" / ")}; fit over the parked host's live points: ${fit.interceptMs} ms + ${fit.slopeMsPerActiveRun} ms × active runs (R² ${fit.r2})`,
  );
  return lines.join("\n");
}
