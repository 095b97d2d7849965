import { readdirSync, readFileSync } from "node:fs";

/**
 * CPU time of the workerd processes this Node process started (Miniflare's
 * runtime), from /proc: the sum over all their threads of the scheduler's
 * on-CPU nanoseconds. Less sensitive than wall time to other work on this
 * 2-core machine, so it is printed next to the wall-clock figures.
 * Returns null where /proc is not available.
 */
export function workerdPids(): number[] {
  const pids: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return pids;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const match = /^\d+ \((.*)\) \S (\d+)/.exec(readFileSync(`/proc/${entry}/stat`, "utf8"));
      if (match && match[1] === "workerd" && Number(match[2]) === process.pid) pids.push(Number(entry));
    } catch {
      // The process ended between listing and reading.
    }
  }
  return pids;
}

export function cpuMsOf(pids: readonly number[]): number | null {
  if (pids.length === 0) return null;
  let ns = 0;
  for (const pid of pids) {
    let threads: string[];
    try {
      threads = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const thread of threads) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${thread}/schedstat`, "utf8").split(" ")[0]);
      } catch {
        // Thread ended.
      }
    }
  }
  return ns / 1e6;
}

/** CPU time of this Node process (user + system), ms. */
export function ownCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** Measures `fn` and the CPU the given processes used meanwhile. */
export async function withCpu<T>(
  pids: readonly number[],
  fn: () => Promise<T>,
): Promise<{ value: T; cpuMs: number | null }> {
  const before = cpuMsOf(pids);
  const value = await fn();
  const after = cpuMsOf(pids);
  return { value, cpuMs: before === null || after === null ? null : after - before };
}
