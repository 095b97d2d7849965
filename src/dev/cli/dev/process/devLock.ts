import { rmSync } from "node:fs";
import path from "node:path";
import { identify, isSameProcess, isRunning } from "./processInfo.ts";
import { readStateFile, writeStateFile } from "../state/stateFile.ts";

/**
 * One `platform dev` per project folder: `<dir>/.platform/dev.lock` names the
 * process that holds it. Created exclusively (O_EXCL), so of two starts only
 * one wins; a lock whose process is gone (or whose pid now belongs to another
 * process) is stale and taken over.
 */
export interface DevLock {
  pid: number;
  /** /proc start time of `pid`, to tell it from a later process given the same pid; null off Linux. */
  startTime: number | null;
  command: string;
  url: string;
  startedAt: string;
}

export type LockResult = { acquired: true; tookOverFrom: DevLock | null } | { acquired: false; holder: DevLock };

export function devLockPath(stateDir: string): string {
  return path.join(stateDir, "dev.lock");
}

export function readDevLock(stateDir: string): DevLock | null {
  return readStateFile<DevLock>(devLockPath(stateDir));
}

/** The holder is still the process that took the lock. */
export function isLockHeld(lock: DevLock): boolean {
  return lock.startTime === null ? isRunning(lock.pid) : isSameProcess(lock);
}

export function acquireDevLock(stateDir: string, url: string, now: Date = new Date()): LockResult {
  const self = identify(process.pid);
  const lock: DevLock = { ...self, url, startedAt: now.toISOString() };
  let tookOverFrom: DevLock | null = null;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeStateFile(devLockPath(stateDir), lock, { exclusive: true });
      return { acquired: true, tookOverFrom };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const holder = readDevLock(stateDir);
    if (holder && isLockHeld(holder)) return { acquired: false, holder };
    tookOverFrom = holder;
    rmSync(devLockPath(stateDir), { force: true });
  }
  // Lost every race for a stale lock to other starts: one of them runs.
  const holder = readDevLock(stateDir);
  if (holder) return { acquired: false, holder };
  throw new Error(`Could not take ${devLockPath(stateDir)}; try again.`);
}

/** Removes the lock if `pid` (default: this process) holds it; never another process's lock. */
export function releaseDevLock(stateDir: string, pid: number = process.pid): void {
  if (readDevLock(stateDir)?.pid === pid) rmSync(devLockPath(stateDir), { force: true });
}
