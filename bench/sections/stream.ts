import { mean, quantile, round } from "../lib/stats.ts";
import { measureCpu } from "./shared.ts";
import { startOursW2Host } from "./workerdOurs.ts";

/**
 * Section T: run streams (issue 31) on the real actors in workerd, the bench project hosted as section A
 * hosts it. One "stream" run publishes `MESSAGES` messages (`ctx.publish`), `GAP_MS` apart, after a lead
 * of `LEAD_MS` in which its subscribers attach; 1 and then 100 subscribers in the project worker read them
 * through `workflow.subscribe`. Latency = receive time − publish time, both read by `Date.now()` in the
 * same workerd isolate (the run's actor and the fetch handler share it), so one clock, in whole ms, that
 * moves with I/O. Then the stream's own cost in rows written: a run publishing 1,000 messages less the same
 * run publishing none, on the actors' meter (src/objects/storageMeter.ts). A fresh Miniflare per part.
 * The SSE route (`workflow.streamURL`) serves the same reads over HTTP and is not timed here. Locally the
 * publisher and every reader share workerd's one isolate thread, so many readers slow the publishing itself
 * down: the time publishing took is printed beside the latencies (on Cloudflare the run's actor need not
 * share a thread with the worker reading it).
 */
const MESSAGES = 200;
const GAP_MS = 5;
const LEAD_MS = 300;
const SUBSCRIBER_COUNTS = [1, 100] as const;
const COST_MESSAGES = 1000;

export interface StreamLatencyPoint {
  subscribers: number;
  messages: number;
  /** Every (subscriber, message) pair's receive − publish time, summarized (ms, workerd's clock). */
  samples: number;
  p50MS: number;
  p99MS: number;
  meanMS: number;
  maxMS: number;
  /** Start → result() of the run, its subscribers' reads included (ms, worker clock). */
  runMs: number;
  /** First publish → last publish (ms, worker clock); (messages − 1) × gap were planned. */
  publishMs: number;
  cpuMs: number | null;
}

interface MeterReading {
  rowsWritten: number;
  rowsRead: number;
}

export interface StreamFigures {
  gapMS: number;
  latency: Record<`subscribers${number}`, StreamLatencyPoint>;
  /** Rows written by a run publishing 1,000 messages, by the same run publishing none, and the difference. */
  cost: { rowsWrittenWith1000: number; rowsWrittenWithNone: number; rowsWrittenPer1000Messages: number };
}

interface StreamAnswer {
  runMs: number;
  publishMs: number;
  latencies: number[];
}

const streamRoute = (subscribers: number, messages: number, gapMS: number, leadMS: number) =>
  `/bench/stream?subscribers=${subscribers}&messages=${messages}&gapMS=${gapMS}&leadMS=${leadMS}`;

export async function benchStream(tmpDir: string, progress: (line: string) => void): Promise<StreamFigures> {
  let instance = 0;
  const latency: StreamFigures["latency"] = {};
  for (const subscribers of SUBSCRIBER_COUNTS) {
    progress(`${MESSAGES} messages ${GAP_MS} ms apart, ${subscribers} subscriber(s)`);
    const host = await startOursW2Host(tmpDir, 200 + ++instance);
    try {
      const { value, cpuMs } = await measureCpu(host, () =>
        host.call<StreamAnswer>(streamRoute(subscribers, MESSAGES, GAP_MS, LEAD_MS)),
      );
      latency[`subscribers${subscribers}`] = {
        subscribers,
        messages: MESSAGES,
        samples: value.latencies.length,
        p50MS: round(quantile(value.latencies, 0.5), 1),
        p99MS: round(quantile(value.latencies, 0.99), 1),
        meanMS: round(mean(value.latencies), 2),
        maxMS: Math.max(...value.latencies),
        runMs: value.runMs,
        publishMs: value.publishMs,
        cpuMs: cpuMs === null ? null : round(cpuMs, 0),
      };
    } finally {
      await host.dispose();
    }
  }

  progress(`rows written: a run publishing ${COST_MESSAGES} messages and one publishing none`);
  const host = await startOursW2Host(tmpDir, 200 + ++instance);
  try {
    const rowsWrittenBy = async (messages: number) => {
      await host.call("/bench/meter/reset");
      await host.call(streamRoute(0, messages, 0, 0));
      return (await host.call<MeterReading>("/bench/meter")).rowsWritten;
    };
    const rowsWrittenWithNone = await rowsWrittenBy(0);
    const rowsWrittenWith1000 = await rowsWrittenBy(COST_MESSAGES);
    return {
      gapMS: GAP_MS,
      latency,
      cost: {
        rowsWrittenWith1000,
        rowsWrittenWithNone,
        rowsWrittenPer1000Messages: ((rowsWrittenWith1000 - rowsWrittenWithNone) / COST_MESSAGES) * 1000,
      },
    };
  } finally {
    await host.dispose();
  }
}

export function formatStream(figures: StreamFigures | { error: string }): string {
  if ("error" in figures) return `T. Run streams: FAILED (${figures.error})`;
  const lines = [
    `T. Run streams (ours in workerd: ctx.publish → workflow.subscribe in the project worker; ${MESSAGES} messages ${figures.gapMS} ms apart; receive − publish on the isolate's one clock, whole ms)`,
  ];
  for (const p of Object.values(figures.latency)) {
    lines.push(
      `    ${String(p.subscribers).padStart(3)} subscriber(s): p50 ${p.p50MS} ms, p99 ${p.p99MS} ms (mean ${p.meanMS}, max ${p.maxMS}; ${p.samples.toLocaleString("en-US")} deliveries); published over ${p.publishMs} ms (${(p.messages - 1) * figures.gapMS} planned), run with its reads ${p.runMs} ms, workerd CPU ${p.cpuMs ?? "n/a"} ms`,
    );
  }
  const c = figures.cost;
  lines.push(
    `    cost: ${c.rowsWrittenPer1000Messages.toLocaleString("en-US")} rows written per 1,000 messages (a run publishing ${COST_MESSAGES.toLocaleString("en-US")}: ${c.rowsWrittenWith1000.toLocaleString("en-US")} rows; the same run publishing none: ${c.rowsWrittenWithNone})`,
  );
  return lines.join("\n");
}
