import { createHmac, timingSafeEqual } from "node:crypto";
import { realpathSync, rmSync } from "node:fs";
import path from "node:path";
import { loadOrCreateMachineKey } from "./machineKey.ts";
import { isRunning, isSameProcess, type ProcessIdentity } from "./processInfo.ts";
import { readStateFile, writeStateFile } from "../state/stateFile.ts";

/**
 * The processes a running `platform dev` spawned (workerd, esbuild, …), kept
 * in `<dir>/.platform/dev.processes.json` by its watchdog (see
 * processWatchdog.ts), so that the next start can tell what a crash left
 * behind, and whether it is provably ours.
 *
 * The file sits in the project folder, which may have come from anywhere (a
 * cloned repository can carry a `.platform/`), so it is never trusted as it
 * is: the watchdog signs each record (HMAC-SHA256 with this machine's key,
 * machineKey.ts, kept outside every project) over the folder and every
 * process in it, and a start stops only what a record that verifies names.
 * A record that does not verify (planted, edited, copied from another folder
 * or machine) stops nothing and is said to have been ignored.
 */
export interface RecordedProcesses {
  parent: ProcessIdentity;
  processes: ProcessIdentity[];
}

/** The file's content: the record, the folder it is for, and the signature over both. */
interface SignedRecord extends RecordedProcesses {
  folder: string;
  mac: string;
}

export function recordedProcessesPath(stateDir: string): string {
  return path.join(stateDir, "dev.processes.json");
}

/** The state folder as the signature names it: resolved, symbolic links followed. */
function folderOf(stateDir: string): string {
  try {
    return realpathSync(stateDir);
  } catch {
    return path.resolve(stateDir);
  }
}

function isIdentity(value: unknown): value is ProcessIdentity {
  const p = value as ProcessIdentity | null;
  return (
    typeof p === "object" &&
    p !== null &&
    Number.isSafeInteger(p.pid) &&
    p.pid > 0 &&
    (p.startTime === null || Number.isSafeInteger(p.startTime)) &&
    typeof p.command === "string"
  );
}

function macOf(key: Buffer, folder: string, recorded: RecordedProcesses): string {
  const fields = [recorded.parent, ...recorded.processes].map((p) => [p.pid, p.startTime, p.command]);
  return createHmac("sha256", key)
    .update(JSON.stringify(["platform-dev-processes-v1", folder, fields]))
    .digest("hex");
}

/**
 * What the file says, once its signature checks out for this folder with this
 * machine's key: `none` (no file, or not JSON), `unverified` (a file this
 * machine's `platform dev` did not write for this folder, or no key to check
 * it with), or the record.
 */
export type RecordedProcessesFile =
  | { kind: "none" }
  | { kind: "unverified" }
  | { kind: "verified"; recorded: RecordedProcesses };

export function readRecordedProcesses(stateDir: string, key?: Buffer): RecordedProcessesFile {
  const file = readStateFile<Partial<SignedRecord>>(recordedProcessesPath(stateDir));
  if (file === null) return { kind: "none" };
  const { parent, processes, folder, mac } = file;
  if (
    !isIdentity(parent) ||
    !Array.isArray(processes) ||
    !processes.every(isIdentity) ||
    typeof folder !== "string" ||
    typeof mac !== "string" ||
    !/^[0-9a-f]{64}$/.test(mac)
  )
    return { kind: "unverified" };
  const recorded = { parent, processes };
  let machineKey: Buffer;
  try {
    machineKey = key ?? loadOrCreateMachineKey();
  } catch {
    return { kind: "unverified" };
  }
  const expected = Buffer.from(macOf(machineKey, folderOf(stateDir), recorded), "hex");
  if (folder !== folderOf(stateDir) || !timingSafeEqual(expected, Buffer.from(mac, "hex")))
    return { kind: "unverified" };
  return { kind: "verified", recorded };
}

export function writeRecordedProcesses(
  stateDir: string,
  recorded: RecordedProcesses,
  key: Buffer = loadOrCreateMachineKey(),
): void {
  const folder = folderOf(stateDir);
  const signed: SignedRecord = { ...recorded, folder, mac: macOf(key, folder, recorded) };
  writeStateFile(recordedProcessesPath(stateDir), signed);
}

export function clearRecordedProcesses(stateDir: string): void {
  rmSync(recordedProcessesPath(stateDir), { force: true });
}

/** SIGTERM, then SIGKILL for whatever still runs after `graceMS`; only processes that are still the recorded ones. */
export async function terminate(processes: ProcessIdentity[], graceMS = 1_000): Promise<void> {
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
  const deadline = Date.now() + graceMS;
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
 * what it left running, only when the record verifies (this machine's
 * `platform dev` wrote it for this folder) and each process is provably the
 * recorded one (same pid, start time and command line); a recorded pid that
 * now names another process is left alone. A record that does not verify
 * stops nothing. Returns the lines to print.
 */
export async function stopLeftovers(stateDir: string, key?: Buffer): Promise<string[]> {
  const file = readRecordedProcesses(stateDir, key);
  if (file.kind === "none") return [];
  clearRecordedProcesses(stateDir);
  if (file.kind === "unverified") {
    return [
      `Ignored ${recordedProcessesPath(stateDir)}: this machine's platform dev did not write it for this folder (it may have come with the folder), so no process was stopped.`,
    ];
  }
  const ours = file.recorded.processes.filter(isSameProcess);
  if (!ours.length) return [];
  await terminate(ours);
  return ours.map((p) => `Stopped ${describeProcess(p)}, left over from a platform dev that was killed.`);
}
