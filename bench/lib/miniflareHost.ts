import { convertV4MiniflareOptions, Log, LogLevel, Miniflare, type V4WorkerOptions } from "miniflare";
import path from "node:path";
import { cpuMsOf, workerdPids } from "./processCpu.ts";

export interface WorkerHost {
  /** POSTs to a bench route of the worker; returns its JSON and the time seen from Node. */
  call<T>(pathAndQuery: string): Promise<T & { outsideMs: number }>;
  /** The same, to another worker of this Miniflare (a companion). */
  callOn<T>(workerName: string, pathAndQuery: string): Promise<T & { outsideMs: number }>;
  /** CPU ms used by this Miniflare's workerd process so far (null without /proc). */
  cpuMs(): number | null;
  /** Lines the worker logged (console.log / console.error), newest last, at most 200. */
  logs: string[];
  dispose(): Promise<void>;
}

type HostedWorker = V4WorkerOptions & { name: string; scriptPath: string };

/**
 * One Miniflare running one worker, configured the way `platform dev` does it
 * (v4-style options through `convertV4MiniflareOptions`, `cf: false`,
 * `modulesRoot` = the bundle's folder), with its state under `stateDir`, and
 * any companion workers it binds to (the platform's side of a call).
 */
export async function startWorker(
  worker: HostedWorker,
  stateDir: string,
  companions: readonly HostedWorker[] = [],
): Promise<WorkerHost> {
  const logs: string[] = [];
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      cf: false,
      log: new Log(LogLevel.WARN),
      resourcePersistencePath: stateDir,
      // Worker console output is kept for diagnostics instead of interleaving with the report.
      handleStructuredLogs: ({ level, message }) => {
        logs.push(`[${level}] ${message}`);
        if (logs.length > 200) logs.shift();
      },
      workers: [worker, ...companions].map((w) => ({ modules: true, modulesRoot: path.dirname(w.scriptPath), ...w })),
    }),
  );
  try {
    await mf.ready;
    const pids = workerdPids();
    const entries = new Map<string, Awaited<ReturnType<typeof mf.getWorker>>>();
    for (const w of [worker, ...companions]) entries.set(w.name, await mf.getWorker(w.name));
    const callOn = async <T>(workerName: string, pathAndQuery: string) => {
      const entry = entries.get(workerName);
      if (!entry) throw new Error(`No worker ${workerName} in this host`);
      const began = performance.now();
      const response = await entry.fetch(`http://bench.local${pathAndQuery}`, { method: "POST" });
      const text = await response.text();
      const outsideMs = performance.now() - began;
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        throw new Error(`${workerName} ${pathAndQuery}: status ${response.status}, not JSON: ${text.slice(0, 300)}`);
      }
      if (response.status !== 200 || body.error) {
        throw new Error(
          `${workerName} ${pathAndQuery}: status ${response.status}: ${String(body.error ?? text).slice(0, 2000)}`,
        );
      }
      return { ...(body as T), outsideMs };
    };
    return {
      logs,
      call: (pathAndQuery) => callOn(worker.name, pathAndQuery),
      callOn,
      cpuMs: () => cpuMsOf(pids),
      dispose: () => mf.dispose(),
    };
  } catch (error) {
    await mf.dispose().catch(() => {});
    throw error;
  }
}
