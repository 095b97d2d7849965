import { rmSync } from "node:fs";
import path from "node:path";
import { isRunning, isSameProcess, type ProcessIdentity } from "./processInfo.ts";
import { readStateFile, writeStateFile } from "./stateFile.ts";

/**
 * The processes a running `platform dev` spawned (workerd, esbuild, …), kept
 * in `<dir>/.platform/dev.processes.json` by its watchdog (see
 * processWatchdog.ts), so that the next start can tell what a crash left
 * behind, and whether it is provably ours.
 */
export interface RecordedProcesses {
  parent: ProcessIdentity;
  processes: ProcessIdentity[];
}

export function recordedProcessesPath(stateDir: string): string {
  return path.join(stateDir, "dev.processes.json");
}

export function readRecordedProcesses(stateDir: string): RecordedProcesses | null {
  return readStateFile<RecordedProcesses>(recordedProcessesPath(stateDir));
}

export function writeRecordedProcesses(stateDir: string, recorded: RecordedProcesses): void {
  writeStateFile(recordedProcessesPath(stateDir), recorded);
}

export function clearRecordedProcesses(stateDir: string): void {
  rmSync(recordedProcessesPath(stateDir), { force: true });
}

/** SIGTERM, then SIGKILL for whatever still runs after `graceMs`; only processes that are still the recorded ones. */
export async function terminate(processes: ProcessIdentity[], graceMs = 1_000): Promise<void> {
  const signal = (sig: NodeJS.Signals) => {
    for (const p of processes) {
      if (!isSameProcess(p)) continue;
      try {
        process.kill(p.pid, sig);
      } catch {
        // ended meanwhile
      }
    }
  };
  signal("SIGTERM");
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && processes.some((p) => isRunning(p.pid) && isSameProcess(p)))
    await new Promise((r) => setTimeout(r, 50));
  signal("SIGKILL");
}

export function describeProcess(p: { pid: number; command: string }): string {
  const command = p.command.length > 100 ? `${p.command.slice(0, 100)}…` : p.command;
  return `pid ${p.pid} (${command || "command unknown"})`;
}

/**
 * Called once the lock is ours (so the recorded `platform dev` is gone): stops
 * what it left running when each is provably ours (same pid, start time and
 * command line); a recorded pid that now names another process is left
 * alone. Returns the lines to print.
 */
export async function stopLeftovers(stateDir: string): Promise<string[]> {
  const recorded = readRecordedProcesses(stateDir);
  if (!recorded) return [];
  const lines: string[] = [];
  const ours = recorded.processes.filter(isSameProcess);
  if (ours.length) {
    await terminate(ours);
    for (const p of ours) lines.push(`Stopped ${describeProcess(p)}, left over from a platform dev that was killed.`);
  }
  clearRecordedProcesses(stateDir);
  return lines;
}
