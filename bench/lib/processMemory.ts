import { readdirSync, readFileSync } from "node:fs";

/**
 * What the workerd processes of one Miniflare hold, from /proc: memory (peak
 * and current resident set) and open files. Each live SQLite-backed Durable
 * Object holds its database files open, so open files, not only memory,
 * bound how many actors one workerd process can keep at once.
 */
export interface ProcessMemory {
  /** VmHWM summed over the processes: each one's peak resident set since it started, MiB. */
  peakRssMiB: number;
  /** VmRSS summed over the processes: resident set now, MiB. */
  rssMiB: number;
}

const kibField = (status: string, field: string): number => {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status);
  return match ? Number(match[1]) : 0;
};

/** Memory of the given processes (null without /proc or when none is readable). */
export function memoryOf(pids: readonly number[]): ProcessMemory | null {
  let peakKiB = 0;
  let rssKiB = 0;
  let read = 0;
  for (const pid of pids) {
    let status: string;
    try {
      status = readFileSync(`/proc/${pid}/status`, "utf8");
    } catch {
      continue;
    }
    peakKiB += kibField(status, "VmHWM");
    rssKiB += kibField(status, "VmRSS");
    read++;
  }
  if (read === 0) return null;
  return { peakRssMiB: Math.round(peakKiB / 1024), rssMiB: Math.round(rssKiB / 1024) };
}

/** Files (descriptors) the given processes have open now, summed (null without /proc). */
export function openFilesOf(pids: readonly number[]): number | null {
  let open = 0;
  let read = 0;
  for (const pid of pids) {
    try {
      open += readdirSync(`/proc/${pid}/fd`).length;
      read++;
    } catch {
      // Process ended.
    }
  }
  return read === 0 ? null : open;
}

/** The lowest soft limit on open files (RLIMIT_NOFILE) among the given processes (null without /proc). */
export function openFilesLimitOf(pids: readonly number[]): number | null {
  let limit: number | null = null;
  for (const pid of pids) {
    try {
      const match = /^Max open files\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/limits`, "utf8"));
      if (match) limit = Math.min(limit ?? Infinity, Number(match[1]));
    } catch {
      // Process ended.
    }
  }
  return limit;
}
