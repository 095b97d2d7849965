import { round } from "../lib/stats.ts";
import { startOursW2Host } from "./workerdOurs.ts";

/**
 * Section M: what our workflows cost on Cloudflare's meter, as the runtime counts it. Each workload runs
 * in a fresh Miniflare (the bench project hosted as section A hosts it) between a reset and a read of the
 * actors' meter (src/objects/storageMeter.ts: each SQL cursor's `rowsWritten` / `rowsRead`, index rows
 * included, every `setAlarm`, every alarm run), summed over every workflow actor of the isolate: run
 * actors, the run index, flow-key actors.
 *
 * Dollars use Cloudflare's Durable Objects list prices, read on 2026-11-28: rows written $1.00 per million
 * (an alarm set is a row written), rows read $0.001 per million. Requests ($0.15 per million) and
 * duration ($12.50 per million GB-s) are not metered here yet, so the dollars are a floor.
 */
export const CLOUDFLARE_PRICES = Object.freeze({
  readOn: "2026-11-28",
  rowsWrittenPerMillion: 1.0,
  rowsReadPerMillion: 0.001,
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
  dollarsPerMillionSteps: number;
}

export interface MeterFigures {
  points: Record<string, MeterPoint>;
}

interface Workload {
  workload: string;
  about: string;
  runs: number;
  steps: number;
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
];

export async function benchMeter(tmpDir: string, progress: (line: string) => void): Promise<MeterFigures> {
  const points: Record<string, MeterPoint> = {};
  let instance = 0;
  for (const w of WORKLOADS) {
    progress(`${w.workload}: ${w.about}`);
    const host = await startOursW2Host(tmpDir, 100 + ++instance);
    try {
      await host.call("/bench/meter/reset");
      for (const route of w.routes) await host.call(route);
      const reading = await host.call<MeterReading>("/bench/meter");
      const dollars =
        (reading.rowsWritten + reading.alarmsSet) * (CLOUDFLARE_PRICES.rowsWrittenPerMillion / 1e6) +
        reading.rowsRead * (CLOUDFLARE_PRICES.rowsReadPerMillion / 1e6);
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
        dollarsPerMillionSteps: round((dollars / w.steps) * 1e6, 2),
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
    "M. Meter (ours in workerd: each SQL cursor's rowsWritten/rowsRead, index rows included, and every setAlarm, summed over the workflow actors)",
    `  prices: Cloudflare Durable Objects list prices read ${CLOUDFLARE_PRICES.readOn}: rows written $1.00/M (an alarm set counts as one), rows read $0.001/M; requests and duration not metered yet (dollars are a floor)`,
    `  anchors' list prices: ${ANCHOR_PRICES}`,
  ];
  for (const p of Object.values(figures.points)) {
    lines.push(
      `    ${p.workload.padEnd(15)} ${p.about}: ${p.reading.rowsWritten.toLocaleString("en-US")} rows written (${p.rowsWrittenPerStep}/step, ${p.rowsWrittenPerRun}/run), ${p.reading.rowsRead.toLocaleString("en-US")} read (${p.rowsReadPerStep}/step), ${p.reading.alarmsSet} alarms set (${p.alarmsSetPerStep}/step), ${p.reading.alarmRuns} alarm runs; $${p.dollarsPerMillionSteps} per million steps`,
    );
  }
  return lines.join("\n");
}
