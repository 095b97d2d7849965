import { clearDevSession } from "../state/devState.ts";
import { releaseDevLock } from "./devLock.ts";
import { clearRecordedProcesses, terminate, writeRecordedProcesses } from "./leftoverProcesses.ts";
import { loadOrCreateMachineKey } from "./machineKey.ts";
import { descendantsOf, identify, isRunning, isSameProcess, type ProcessIdentity } from "./processInfo.ts";

/**
 * The watchdog of one `platform dev` (started by processWatchdog.ts):
 * `node watchdogProcess.ts <parent pid> <state dir>`, its stdin a pipe from
 * the parent. Every POLL_MS it records the parent's descendants (workerd,
 * esbuild, …) in `.platform/dev.processes.json`, signed with this machine's
 * key (without one it records nothing, and a next start stops nothing); when
 * the pipe closes (the parent exited, however: a SIGKILL closes it too) or
 * the parent is gone, it stops every process it saw that is still the one it
 * saw, and, if the parent died without cleaning up, its lock and session file.
 */
const POLL_MS = 200;

const parentPid = Number(process.argv[2]);
const stateDir = process.argv[3]!;
const parent = identify(parentPid);
const known = new Map<number, ProcessIdentity>();
let last = "";
const key = machineKey();

function machineKey(): Buffer | null {
  try {
    return loadOrCreateMachineKey();
  } catch (error) {
    console.error(`platform dev: cannot record its processes for a later clean-up: ${(error as Error).message}`);
    return null;
  }
}

function poll(): void {
  if (!isRunning(parentPid)) return void finish();
  for (const [pid, p] of known) if (!isSameProcess(p)) known.delete(pid);
  for (const pid of descendantsOf(parentPid)) {
    if (pid !== process.pid && !known.has(pid)) known.set(pid, identify(pid));
  }
  const processes = [...known.values()];
  const now = JSON.stringify(processes);
  if (key && now !== last) {
    last = now;
    writeRecordedProcesses(stateDir, { parent, processes }, key);
  }
}

let finishing = false;
async function finish(): Promise<void> {
  if (finishing) return;
  finishing = true;
  clearInterval(timer);
  await terminate([...known.values()], 1_000);
  if (!isRunning(parentPid)) {
    releaseDevLock(stateDir, parentPid);
    clearDevSession(stateDir, parentPid);
  }
  clearRecordedProcesses(stateDir);
  process.exit(0);
}

const timer = setInterval(poll, POLL_MS);
poll();
process.stdin.on("end", () => void finish());
process.stdin.on("error", () => void finish());
process.stdin.resume();
