import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/**
 * What `platform dev` needs to know about other processes, read from /proc
 * (Linux). Elsewhere every answer is "unknown" (null / empty), so the callers
 * fall back to plain pid checks.
 */

/** A process as recorded in `.platform/`: its start time tells a live process from a reused pid. */
export interface ProcessIdentity {
  pid: number;
  /** Clock ticks since boot when the process started (/proc/<pid>/stat field 22); null off Linux. */
  startTime: number | null;
  command: string;
}

function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: split after its closing one.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/** Alive and not a zombie (a zombie has ended; it only waits for its parent to reap it). */
export function isRunning(pid: number): boolean {
  const fields = statFields(pid);
  if (fields) return fields[0] !== "Z";
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

export function startTimeOf(pid: number): number | null {
  const fields = statFields(pid);
  return fields ? Number(fields[19]) : null;
}

export function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
  } catch {
    return "";
  }
}

export function identify(pid: number): ProcessIdentity {
  return { pid, startTime: startTimeOf(pid), command: commandOf(pid) };
}

/** Still the very process that was recorded: same pid, same start time, same command line. */
export function isSameProcess(recorded: ProcessIdentity): boolean {
  if (!isRunning(recorded.pid)) return false;
  const now = identify(recorded.pid);
  if (recorded.startTime === null || now.startTime === null) return false;
  return now.startTime === recorded.startTime && now.command === recorded.command;
}

/** Every descendant of `pid`, children first. */
export function descendantsOf(pid: number): number[] {
  const found: number[] = [];
  let children: number[] = [];
  try {
    children = readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number),
    );
  } catch {
    return found;
  }
  for (const child of children) found.push(child, ...descendantsOf(child));
  return found;
}

/** The process listening on a TCP port (any local address), if /proc can tell. */
export function listenerOnPort(port: number): number | null {
  const inodes = new Set<string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex; state 0A is LISTEN.
      if (cols.length > 9 && cols[3] === "0A" && Number.parseInt(cols[1]!.split(":")[1]!, 16) === port)
        inodes.add(cols[9]!);
    }
  }
  if (inodes.size === 0) return null;
  for (const entry of safeReaddir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    for (const fd of safeReaddir(`/proc/${entry}/fd`)) {
      try {
        const target = readlinkSync(`/proc/${entry}/fd/${fd}`);
        const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
        if (inode && inodes.has(inode)) return Number(entry);
      } catch {
        // closed meanwhile, or not ours to read
      }
    }
  }
  return null;
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
