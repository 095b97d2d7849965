import { round } from "../lib/stats.ts";
import { measureCpu } from "./shared.ts";
import { PLATFORM_WORKER, startOursW2Host } from "./workerdOurs.ts";

/**
 * Section M: what our workflows cost on Cloudflare's meter, as the runtime counts it. Each workload runs
 * in a fresh Miniflare (the bench project hosted as section A hosts it) between a reset and a read of the
 * actors' meter (src/objects/storageMeter.ts), summed over every workflow actor of the isolate (run actors,
 * the run index, flow-key actors): each SQL cursor's `rowsWritten` / `rowsRead` (index rows included),
 * every `setAlarm`, every alarm run, every RPC call into an actor (the actors have no `fetch` handler), each
 * actor's active wall time (its entries and run executions under way), and the bench project's fetch
 * handler entries. As under the platform, each start holds a slot of the account's live-run budget and
 * each end gives it back (the real `LiveRunBudget` actor behind the bench's stand-in of the API worker,
 * bench/projects/platform), and that isolate's meter is added: its rows, and a request per call to it.
 * Rate limiters are not bound in the bench project, so none is involved.
 *
 * Dollars use Cloudflare's Durable Objects list prices, read on 2026-11-28: rows written $1.00 per million
 * (an alarm set is a row written), rows read $0.001 per million, requests $0.15 per million (an RPC call or
 * an alarm run is one), duration $12.50 per million GB-s, an object counted at 128 MB. Worker invocations
 * and CPU are printed, not priced: the invocations are the bench's own calls to its routes, and workerd's
 * CPU (from /proc) is the worker's, the actors' and the runtime's in one process, while Cloudflare bills CPU
 * for the worker's share only, which workerd does not report apart.
 */
export const CLOUDFLARE_PRICES = Object.freeze({
  readOn: "2026-11-28",
  rowsWrittenPerMillion: 1.0,
  rowsReadPerMillion: 0.001,
  requestsPerMillion: 0.15,
  gbSecondsPerMillion: 12.5,
  objectGB: 0.128,
});

/** The anchors' list prices per million steps (or actions), as issue 35 quotes them. */
export const ANCHOR_PRICES =
  "Vercel Workflow $25, Trigger.dev $25 per million runs plus compute, Temporal Cloud $25–50 per million actions, Hatchet $10";

interface MeterReading {
  rowsRead: number;
  rowsWritten: number;
  alarmsSet: number;
  alarmRuns: number;
  statements: number;
  rpcCalls: number;
  activeMS: number;
  workerInvocations: number;
}

export interface MeterPoint {
  workload: string;
  about: string;
  runs: number;
  steps: number;
  reading: MeterReading;
  rowsWrittenPerStep: number;
  rowsWrittenPerRun: number;
  rowsReadPerStep: number;
  alarmsSetPerStep: number;
  /** Durable Object requests: RPC calls and alarm runs. */
  requestsPerStep: number;
  requestsPerRun: number;
  activeMsPerStep: number;
  /** workerd's process CPU (worker, actors and runtime together), not priced. */
  workerdCpuMsPerStep: number | null;
  /** Rows written (whole runs) per 1,000 stream messages, for a workload that publishes. */
  rowsWrittenPer1000Messages?: number;
  /** Rows, alarms set, requests and duration: the all-in figure. */
  dollarsPerMillionSteps: number;
  /** Rows and alarms set only. */
  storageDollarsPerMillionSteps: number;
  requestDollarsPerMillionSteps: number;
  durationDollarsPerMillionSteps: number;
  /** Duration priced at workerd's CPU ms instead of the measured wall time (null without /proc). */
  durationAtCpuDollarsPerMillionSteps: number | null;
}

export interface MeterFigures {
  points: Record<string, MeterPoint>;
}

interface Workload {
  workload: string;
  about: string;
  runs: number;
  steps: number;
  /** Stream messages its runs publish. */
  messages?: number;
  /** Bench project routes called in order; the meter covers all of them. */
  routes: string[];
}

const WORKLOADS: Workload[] = [
  {
    workload: "w2",
    about: "200 concurrent runs of 10 steps",
    runs: 200,
    steps: 2000,
    routes: ["/bench/concurrent?runs=200&steps=10"],
  },
  {
    workload: "w3",
    about: "50 one-step runs, start → result() each",
    runs: 50,
    steps: 50,
    routes: ["/bench/latency?n=50"],
  },
  {
    workload: "fanOut100",
    about: "one parent fanning out to 100 one-step children",
    runs: 101,
    steps: 102,
    routes: ["/bench/fan-out?children=100"],
  },
  {
    workload: "waitForEvent",
    about: "50 runs waiting for an event, then woken",
    runs: 50,
    steps: 100,
    routes: ["/bench/idle?sleepers=0&waiters=50&parkMS=3600000", "/bench/wake"],
  },
  {
    workload: "concurrencyKey",
    about: "100 one-step runs under concurrency { limit: 10 }",
    runs: 100,
    steps: 100,
    routes: ["/bench/held?runs=100&holdMS=10"],
  },
  {
    workload: "stream1000",
    about: "one run publishing 1,000 stream messages in its step, no subscriber",
    runs: 1,
    steps: 1,
    messages: 1000,
    routes: ["/bench/stream?subscribers=0&messages=1000&gapMS=0&leadMS=0"],
  },
];

/**
 * Dollars per million steps of one workload's reading, by what Cloudflare bills. Here every actor shares
 * workerd's one isolate thread, so an actor's measured wall time includes waiting for the thread while
 * others run (200 runs at once in w2): on Cloudflare, where actors run apart, the same work bills less.
 * Duration is therefore also priced at workerd's CPU ms (all of it counted as the actors'), a lower figure.
 */
function dollarsPerMillionSteps(reading: MeterReading, steps: number, cpuMs: number | null) {
  const perMillionSteps = (dollars: number) => round((dollars / steps) * 1e6, 2);
  const durationOf = (ms: number) =>
    (ms / 1000) * CLOUDFLARE_PRICES.objectGB * (CLOUDFLARE_PRICES.gbSecondsPerMillion / 1e6);
  const storage =
    (reading.rowsWritten + reading.alarmsSet) * (CLOUDFLARE_PRICES.rowsWrittenPerMillion / 1e6) +
    reading.rowsRead * (CLOUDFLARE_PRICES.rowsReadPerMillion / 1e6);
  const requests = (reading.rpcCalls + reading.alarmRuns) * (CLOUDFLARE_PRICES.requestsPerMillion / 1e6);
  const duration = durationOf(reading.activeMS);
  return {
    dollarsPerMillionSteps: perMillionSteps(storage + requests + duration),
    storageDollarsPerMillionSteps: perMillionSteps(storage),
    requestDollarsPerMillionSteps: perMillionSteps(requests),
    durationDollarsPerMillionSteps: perMillionSteps(duration),
    durationAtCpuDollarsPerMillionSteps: cpuMs === null ? null : perMillionSteps(durationOf(cpuMs)),
  };
}

/** The project's isolate and the platform's, one reading (each isolate keeps its own meter). */
function sumReadings(project: MeterReading, platform: MeterReading): MeterReading {
  const sum = {} as MeterReading;
  for (const key of Object.keys(METER_KEYS) as (keyof MeterReading)[]) sum[key] = project[key] + platform[key];
  return sum;
}

const METER_KEYS: Record<keyof MeterReading, true> = {
  rowsRead: true,
  rowsWritten: true,
  alarmsSet: true,
  alarmRuns: true,
  statements: true,
  rpcCalls: true,
  activeMS: true,
  workerInvocations: true,
};

export async function benchMeter(tmpDir: string, progress: (line: string) => void): Promise<MeterFigures> {
  const points: Record<string, MeterPoint> = {};
  let instance = 0;
  for (const w of WORKLOADS) {
    progress(`${w.workload}: ${w.about}`);
    const host = await startOursW2Host(tmpDir, 100 + ++instance, { platform: true });
    try {
      await host.call("/bench/meter/reset");
      await host.callOn(PLATFORM_WORKER, "/bench/meter/reset");
      const { cpuMs } = await measureCpu(host, async () => {
        for (const route of w.routes) await host.call(route);
      });
      const reading = sumReadings(
        await host.call<MeterReading>("/bench/meter"),
        await host.callOn<MeterReading>(PLATFORM_WORKER, "/bench/meter"),
      );
      const requests = reading.rpcCalls + reading.alarmRuns;
      points[w.workload] = {
        workload: w.workload,
        about: w.about,
        runs: w.runs,
        steps: w.steps,
        reading,
        rowsWrittenPerStep: round(reading.rowsWritten / w.steps, 2),
        rowsWrittenPerRun: round(reading.rowsWritten / w.runs, 2),
        rowsReadPerStep: round(reading.rowsRead / w.steps, 2),
        alarmsSetPerStep: round(reading.alarmsSet / w.steps, 3),
        requestsPerStep: round(requests / w.steps, 2),
        requestsPerRun: round(requests / w.runs, 2),
        activeMsPerStep: round(reading.activeMS / w.steps, 2),
        workerdCpuMsPerStep: cpuMs === null ? null : round(cpuMs / w.steps, 2),
        ...(w.messages ? { rowsWrittenPer1000Messages: round((reading.rowsWritten / w.messages) * 1000, 0) } : {}),
        ...dollarsPerMillionSteps(reading, w.steps, cpuMs),
      };
    } finally {
      await host.dispose();
    }
  }
  return { points };
}

export function formatMeter(figures: MeterFigures | { error: string }): string {
  if ("error" in figures) return `M. Meter: FAILED (${figures.error})`;
  const lines = [
    "M. Meter (ours in workerd, summed over the workflow actors: each SQL cursor's rowsWritten/rowsRead, index rows included; every setAlarm and alarm run; every RPC call into an actor; each actor's active wall time)",
    `  prices: Cloudflare Durable Objects list prices read ${CLOUDFLARE_PRICES.readOn}: rows written $1.00/M (an alarm set counts as one), rows read $0.001/M, requests $0.15/M (an RPC call or an alarm run), duration $12.50/M GB-s at 128 MB per object`,
    "  duration: wall ms on workerd's clock (moves with I/O only) while one of an actor's entries (RPC method, alarm) or a run execution is under way, from when the actor runs it; a synchronous CPU stretch reads 0 ms, idle time in memory is not measured; here all actors share one isolate thread, so an entry awaiting I/O also waits for the thread (more than Cloudflare would bill for the same work)",
    "  not priced: worker invocations (the bench's own route calls) and CPU (workerd's process CPU is printed; Cloudflare bills the worker's share only, which workerd does not report apart)",
    `  anchors' list prices: ${ANCHOR_PRICES}`,
  ];
  for (const p of Object.values(figures.points)) {
    const r = p.reading;
    lines.push(
      `    ${p.workload.padEnd(15)} ${p.about}: ${r.rowsWritten.toLocaleString("en-US")} rows written (${p.rowsWrittenPerStep}/step, ${p.rowsWrittenPerRun}/run${p.rowsWrittenPer1000Messages === undefined ? "" : `, ${p.rowsWrittenPer1000Messages.toLocaleString("en-US")} per 1,000 messages`}), ${r.rowsRead.toLocaleString("en-US")} read (${p.rowsReadPerStep}/step), ${r.alarmsSet} alarms set (${p.alarmsSetPerStep}/step), ${r.alarmRuns} alarm runs`,
      `    ${"".padEnd(15)} requests ${(r.rpcCalls + r.alarmRuns).toLocaleString("en-US")} (${r.rpcCalls.toLocaleString("en-US")} RPC calls + ${r.alarmRuns} alarm runs; ${p.requestsPerStep}/step, ${p.requestsPerRun}/run), active ${r.activeMS.toLocaleString("en-US")} ms (${p.activeMsPerStep} ms/step), ${r.workerInvocations} worker invocations, workerd CPU ${p.workerdCpuMsPerStep ?? "n/a"} ms/step`,
      `    ${"".padEnd(15)} $ per million steps: ${p.dollarsPerMillionSteps} all-in = ${p.storageDollarsPerMillionSteps} storage + ${p.requestDollarsPerMillionSteps} requests + ${p.durationDollarsPerMillionSteps} duration (duration at workerd's CPU ms instead: ${p.durationAtCpuDollarsPerMillionSteps ?? "n/a"})`,
    );
  }
  return lines.join("\n");
}
