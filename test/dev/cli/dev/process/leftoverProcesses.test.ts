import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  readRecordedProcesses,
  recordedProcessesPath,
  stopLeftovers,
  writeRecordedProcesses,
  type RecordedProcesses,
} from "#src/dev/cli/dev/process/leftoverProcesses.ts";
import { loadOrCreateMachineKey, machineKeyPath } from "#src/dev/cli/dev/process/machineKey.ts";
import { identify, isRunning } from "#src/dev/cli/dev/process/processInfo.ts";

let work: string;
let stateDir: string;
const started: ChildProcess[] = [];

/** A process of the user's that has nothing to do with platform dev. */
function usersProcess(): ChildProcess {
  const child = spawn("sleep", ["300"], { stdio: "ignore" });
  started.push(child);
  return child;
}

/** Until /proc shows the spawned command line (right after spawn it may still be node's). */
async function identityOf(child: ChildProcess) {
  for (let i = 0; i < 100 && !identify(child.pid!).command.startsWith("sleep"); i++)
    await new Promise((r) => setTimeout(r, 10));
  return identify(child.pid!);
}

beforeEach(() => {
  work = mkdtempSync(path.join(tmpdir(), "leftovers-"));
  stateDir = path.join(work, "project", ".platform");
  mkdirSync(stateDir, { recursive: true });
  vi.stubEnv("XDG_CONFIG_HOME", path.join(work, "config"));
});
afterEach(() => {
  vi.unstubAllEnvs();
  for (const child of started.splice(0)) child.kill("SIGKILL");
  rmSync(work, { recursive: true, force: true });
});

describe("a dev.processes.json that arrived with the folder stops nothing", () => {
  it("the planted record (today's format, naming a live process of the user's exactly) is ignored, and says so", async () => {
    const victim = usersProcess();
    const planted: RecordedProcesses = { parent: identify(process.pid), processes: [await identityOf(victim)] };
    writeFileSync(recordedProcessesPath(stateDir), JSON.stringify(planted));

    const lines = await stopLeftovers(stateDir);

    expect(isRunning(victim.pid!)).toBe(true);
    expect(lines).toEqual([
      `Ignored ${recordedProcessesPath(stateDir)}: this machine's platform dev did not write it for this folder (it may have come with the folder), so no process was stopped.`,
    ]);
    expect(existsSync(recordedProcessesPath(stateDir))).toBe(false);
  });

  const tampered: [string, (record: Record<string, unknown>, victim: ReturnType<typeof identify>) => void][] = [
    ["a signed record with a process added", (record, victim) => (record.processes as unknown[]).push(victim)],
    ["a signed record with a forged mac", (record) => (record.mac = "0".repeat(64))],
    ["a signed record without its mac", (record) => delete record.mac],
    ["a signed record moved to another folder", (record) => (record.folder = "/elsewhere/.platform")],
  ];
  it.each(tampered)("%s is ignored", async (_name, tamper) => {
    const victim = await identityOf(usersProcess());
    writeRecordedProcesses(stateDir, { parent: identify(process.pid), processes: [] });
    const record = JSON.parse(readFileSync(recordedProcessesPath(stateDir), "utf8")) as Record<string, unknown>;
    tamper(record, victim);
    writeFileSync(recordedProcessesPath(stateDir), JSON.stringify(record));
    expect(readRecordedProcesses(stateDir).kind).toBe("unverified");
    expect(await stopLeftovers(stateDir)).toEqual([expect.stringMatching(/^Ignored .*no process was stopped\.$/)]);
    expect(isRunning(victim.pid)).toBe(true);
  });

  it("a record this machine signed for one folder, copied into another, stops nothing there", async () => {
    const victim = await identityOf(usersProcess());
    writeRecordedProcesses(stateDir, { parent: identify(process.pid), processes: [victim] });
    const other = path.join(work, "copy", ".platform");
    mkdirSync(other, { recursive: true });
    writeFileSync(recordedProcessesPath(other), readFileSync(recordedProcessesPath(stateDir)));
    expect(await stopLeftovers(other)).toEqual([expect.stringMatching(/^Ignored /)]);
    expect(isRunning(victim.pid)).toBe(true);
  });

  it("a record signed with another machine's key stops nothing", async () => {
    const victim = await identityOf(usersProcess());
    writeRecordedProcesses(stateDir, { parent: identify(process.pid), processes: [victim] }, Buffer.alloc(32, 7));
    expect(await stopLeftovers(stateDir)).toEqual([expect.stringMatching(/^Ignored /)]);
    expect(isRunning(victim.pid)).toBe(true);
  });
});

describe("what this machine's platform dev recorded is stopped", () => {
  it("a process in a record it signed for this folder is stopped, with a line naming it", async () => {
    const leftover = await identityOf(usersProcess());
    writeRecordedProcesses(stateDir, { parent: identify(process.pid), processes: [leftover] });
    expect(readRecordedProcesses(stateDir).kind).toBe("verified");

    const lines = await stopLeftovers(stateDir);

    expect(lines).toEqual([`Stopped pid ${leftover.pid} (sleep 300), left over from a platform dev that was killed.`]);
    expect(isRunning(leftover.pid)).toBe(false);
    expect(existsSync(recordedProcessesPath(stateDir))).toBe(false);
  });

  it("a signed record whose pid now names another process leaves that process alone", async () => {
    const other = await identityOf(usersProcess());
    writeRecordedProcesses(stateDir, {
      parent: identify(process.pid),
      processes: [{ ...other, startTime: (other.startTime ?? 0) - 1 }],
    });
    expect(await stopLeftovers(stateDir)).toEqual([]);
    expect(isRunning(other.pid)).toBe(true);
  });

  it("no record: nothing to say", async () => {
    expect(await stopLeftovers(stateDir)).toEqual([]);
  });
});

describe("the machine key", () => {
  it("is made once, 32 random bytes in a 0600 file of a 0700 folder outside the project, and reused", () => {
    const key = loadOrCreateMachineKey();
    const file = machineKeyPath();
    expect(file).toBe(path.join(work, "config", "platform", "dev-machine.key"));
    expect(key).toHaveLength(32);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect(loadOrCreateMachineKey().equals(key)).toBe(true);
  });

  it("a key file that is not one is named, not overwritten", () => {
    mkdirSync(path.dirname(machineKeyPath()), { recursive: true });
    writeFileSync(machineKeyPath(), "not a key");
    expect(() => loadOrCreateMachineKey()).toThrow(/is not a platform dev key/);
    expect(readFileSync(machineKeyPath(), "utf8")).toBe("not a key");
  });
});
