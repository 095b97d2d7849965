import * as esbuild from "esbuild";
import { builtinModules } from "node:module";
import path from "node:path";
import { COMPATIBILITY_DATE, COMPATIBILITY_FLAGS } from "#src/contracts/workerCompatibility.ts";
import { startWorker, type WorkerHost } from "../lib/miniflareHost.ts";
import { median, round } from "../lib/stats.ts";
import { WORKLOADS } from "../lib/workloads.ts";
import { measureCpu } from "./shared.ts";

const WORKER_SOURCE = path.join(import.meta.dirname, "..", "projects", "breakdown", "worker.js");

/** The ladder's rungs in order, each one part more than the one before (see the worker). */
export const RUNGS = [
  { rung: "floor", part: "runtime floor: a fresh actor, one RPC, one write" },
  { rung: "schema", part: "engine tables + the run's creation" },
  { rung: "steps", part: "step loop: the steps' events appended" },
  { rung: "alarm", part: "alarm: armed before a first wait (these steps never wait)" },
  { rung: "index", part: "run index: the caller's batched report (RPC)" },
  { rung: "full", part: "the rest of the real actor (client, hand-off, bookkeeping)" },
] as const;
type Rung = (typeof RUNGS)[number]["rung"];

export interface BreakdownRow {
  rung: Rung;
  part: string;
  /** workerd CPU per run at this rung (median over rounds), and what this rung adds to the one before (median of the per-round differences). */
  cpuMsPerRun: number | null;
  addedCpuMs: number | null;
  /** Wall time per run of the batch (concurrent) or per run (sequential), median over rounds. */
  wallMsPerRun: number;
  addedWallMs: number;
}

export interface BreakdownTable {
  workload: string;
  runs: number;
  steps: number;
  sequential: boolean;
  rounds: number;
  rows: BreakdownRow[];
  /** full ÷ floor in CPU per run: the target is ≤ 1.5. */
  fullOverFloor: number | null;
}

export interface BreakdownFigures {
  w2: BreakdownTable;
  w3: BreakdownTable;
}

async function bundle(tmpDir: string): Promise<string> {
  const scriptPath = path.join(tmpDir, "build", "worker.js");
  await esbuild.build({
    entryPoints: [WORKER_SOURCE],
    bundle: true,
    format: "esm",
    platform: "browser",
    conditions: ["workerd", "worker", "browser"],
    target: "es2023",
    outfile: scriptPath,
    external: ["cloudflare:*", ...builtinModules, ...builtinModules.map((m) => `node:${m}`)],
    logLevel: "silent",
  });
  return scriptPath;
}

async function measureTable(
  host: WorkerHost,
  workload: string,
  { runs, steps, sequential, rounds }: { runs: number; steps: number; sequential: boolean; rounds: number },
): Promise<BreakdownTable> {
  const samples = new Map<Rung, { cpu: number[]; wall: number[] }>(
    RUNGS.map(({ rung }) => [rung, { cpu: [], wall: [] }]),
  );
  for (let round = 0; round < rounds; round++) {
    // Rungs interleaved within each round (order reversed every other round) so the machine's drift hits all alike.
    const order = round % 2 === 0 ? RUNGS : [...RUNGS].reverse();
    for (const { rung } of order) {
      const { value, cpuMs } = await measureCpu(host, () =>
        host.call<{ ms: number }>(
          `/bench/rung?rung=${rung}&runs=${runs}&steps=${steps}&sequential=${sequential ? 1 : 0}`,
        ),
      );
      const sample = samples.get(rung)!;
      sample.wall.push(value.ms / runs);
      if (cpuMs !== null) sample.cpu.push(cpuMs / runs);
    }
  }
  // What a rung adds is the median over rounds of its difference to the rung before in the same round:
  // neighbouring measurements share the machine's state, so the drift between rounds cancels.
  const addedMedian = (values: number[], before: number[]) =>
    values.length && values.length === before.length ? round(median(values.map((v, i) => v - before[i]!)), 3) : null;
  const rows: BreakdownRow[] = [];
  RUNGS.forEach(({ rung, part }, i) => {
    const { cpu, wall } = samples.get(rung)!;
    const before = i > 0 ? samples.get(RUNGS[i - 1]!.rung)! : null;
    const cpuMsPerRun = cpu.length ? round(median(cpu), 3) : null;
    const wallMsPerRun = round(median(wall), 3);
    rows.push({
      rung,
      part,
      cpuMsPerRun,
      addedCpuMs: before ? addedMedian(cpu, before.cpu) : cpuMsPerRun,
      wallMsPerRun,
      addedWallMs: before ? (addedMedian(wall, before.wall) ?? 0) : wallMsPerRun,
    });
  });
  const floor = rows[0]!.cpuMsPerRun;
  const full = rows[rows.length - 1]!.cpuMsPerRun;
  return {
    workload,
    runs,
    steps,
    sequential,
    rounds,
    rows,
    fullOverFloor: floor && full ? round(full / floor, 2) : null,
  };
}

/**
 * Section D: where a run's cost goes. One Miniflare runs the ladder worker;
 * for workload 2 (200 concurrent 10-step runs) and workload 3 (sequential
 * 1-step runs) every rung is measured in interleaved rounds, and each rung's
 * added CPU per run is what its part costs.
 */
export async function benchBreakdown(tmpDir: string, progress: (line: string) => void): Promise<BreakdownFigures> {
  const scriptPath = await bundle(tmpDir);
  const host = await startWorker(
    {
      name: "bench-breakdown",
      scriptPath,
      compatibilityDate: COMPATIBILITY_DATE,
      compatibilityFlags: [...COMPATIBILITY_FLAGS],
      bindings: { PLATFORM_PROJECT_ID: "4242", PLATFORM_PROJECT_SLUG: "bench", PLATFORM_LOCAL: "1" },
      durableObjects: {
        LADDER: { className: "Ladder", useSQLite: true },
        WORKFLOW_RUNS: { className: "WorkflowRun", useSQLite: true },
        WORKFLOW_RUN_INDEX: { className: "WorkflowRunIndex", useSQLite: true },
        WORKFLOW_FLOW_KEYS: { className: "WorkflowFlowKey", useSQLite: true },
      },
    },
    path.join(tmpDir, "state"),
  );
  try {
    await host.call("/bench/ping");
    for (const { rung } of RUNGS) await host.call(`/bench/rung?rung=${rung}&runs=20&steps=10`);
    const { runs, steps } = WORKLOADS.concurrent;
    progress(`workload 2 ladder: ${runs} concurrent runs x ${steps} steps per rung`);
    const w2 = await measureTable(host, "w2", { runs, steps, sequential: false, rounds: WORKLOADS.breakdownRounds });
    progress(`workload 3 ladder: ${WORKLOADS.latency.runs} sequential 1-step runs per rung`);
    const w3 = await measureTable(host, "w3", {
      runs: WORKLOADS.latency.runs,
      steps: 1,
      sequential: true,
      rounds: WORKLOADS.breakdownRounds,
    });
    return { w2, w3 };
  } finally {
    await host.dispose();
  }
}

const cell = (v: number | null, width: number) => (v === null ? "n/a" : v.toFixed(3)).padStart(width);

/** The two ladders as tables: CPU and wall per run at each rung, and what each rung adds. */
export function formatBreakdown(figures: BreakdownFigures | { error: string }): string {
  if ("error" in figures) return `D. Where a run's cost goes: FAILED (${figures.error})`;
  const lines = ["D. Where a run's cost goes (workerd CPU per run; each rung adds one part to the one above)"];
  for (const table of [figures.w2, figures.w3]) {
    lines.push(
      "",
      `  ${table.workload}: ${table.runs} ${table.sequential ? "sequential" : "concurrent"} runs x ${table.steps} step(s), median of ${table.rounds} interleaved rounds`,
      `  ${"part".padEnd(62)} ${"cpu/run".padStart(8)} ${"+cpu".padStart(8)} ${"wall/run".padStart(9)} ${"+wall".padStart(8)}`,
    );
    for (const row of table.rows) {
      lines.push(
        `  ${row.part.padEnd(62)} ${cell(row.cpuMsPerRun, 8)} ${cell(row.addedCpuMs, 8)} ${cell(row.wallMsPerRun, 9)} ${cell(row.addedWallMs, 8)}`,
      );
    }
    lines.push(`  whole run ÷ runtime floor (CPU): ${table.fullOverFloor ?? "n/a"}x (target ≤ 1.5x)`);
  }
  return lines.join("\n");
}
