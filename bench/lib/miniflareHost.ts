import { convertV4MiniflareOptions, Log, LogLevel, Miniflare, type V4WorkerOptions } from "miniflare";
import path from "node:path";
import { cpuMsOf, workerdPids } from "./processCpu.ts";

export interface WorkerHost {
  /** POSTs to a bench route of the worker; returns its JSON and the time seen from Node. */
  call<T>(pathAndQuery: string): Promise<T & { outsideMs: number }>;
  /** CPU ms used by this Miniflare's workerd process so far (null without /proc). */
  cpuMs(): number | null;
  /** Lines the worker logged (console.log / console.error), newest last, at most 200. */
  logs: string[];
  dispose(): Promise<void>;
}

/**
 * One Miniflare running one worker, configured the way `platform dev` does it
 * (v4-style options through `convertV4MiniflareOptions`, `cf: false`,
 * `modulesRoot` = the bundle's folder), with its state under `stateDir`.
 */
export async function startWorker(
  worker: V4WorkerOptions & { name: string; scriptPath: string },
  stateDir: string,
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
      workers: [{ modules: true, modulesRoot: path.dirname(worker.scriptPath), ...worker }],
    }),
  );
  try {
    await mf.ready;
    const entry = await mf.getWorker(worker.name);
    const pids = workerdPids();
    return {
      logs,
      async call<T>(pathAndQuery: string) {
        const began = performance.now();
        const response = await entry.fetch(`http://bench.local${pathAndQuery}`, { method: "POST" });
        const text = await response.text();
        const outsideMs = performance.now() - began;
        let body: Record<string, unknown>;
        try {
          body = JSON.parse(text) as Record<string, unknown>;
        } catch {
          throw new Error(`${worker.name} ${pathAndQuery}: status ${response.status}, not JSON: ${text.slice(0, 300)}`);
        }
        if (response.status !== 200 || body.error) {
          throw new Error(
            `${worker.name} ${pathAndQuery}: status ${response.status}: ${String(body.error ?? text).slice(0, 2000)}`,
          );
        }
        return { ...(body as T), outsideMs };
      },
      cpuMs: () => cpuMsOf(pids),
      dispose: () => mf.dispose(),
    };
  } catch (error) {
    await mf.dispose().catch(() => {});
    throw error;
  }
}
