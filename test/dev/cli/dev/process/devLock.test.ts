import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { acquireDevLock, devLockPath, readDevLock, releaseDevLock } from "#src/dev/cli/dev/process/devLock.ts";
import { identify } from "#src/dev/cli/dev/process/processInfo.ts";

/** A pid that was used and has ended (its process exited and was reaped). */
function deadPid(): number {
  return Number(spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]).stdout.toString());
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "dev-lock-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const writeLock = (lock: object) => writeFileSync(devLockPath(dir), JSON.stringify(lock));

describe("one platform dev per folder", () => {
  it("takes a free lock, recording pid, URL and start time", () => {
    const now = new Date("2026-11-22T10:00:00Z");
    expect(acquireDevLock(dir, "http://127.0.0.1:8950", now)).toEqual({ acquired: true, tookOverFrom: null });
    expect(readDevLock(dir)).toMatchObject({
      pid: process.pid,
      url: "http://127.0.0.1:8950",
      startedAt: "2026-11-22T10:00:00.000Z",
    });
  });

  it("refuses while a live process holds it", () => {
    const holder = { ...identify(process.ppid), url: "http://127.0.0.1:8951", startedAt: "x" };
    writeLock(holder);
    expect(acquireDevLock(dir, "http://127.0.0.1:8952")).toEqual({ acquired: false, holder });
  });

  it.each([
    ["whose process is gone", () => ({ pid: deadPid(), startTime: 1, command: "node", url: "u", startedAt: "x" })],
    [
      "whose pid now belongs to another process (other start time)",
      () => ({
        ...identify(process.ppid),
        startTime: (identify(process.ppid).startTime ?? 0) + 1,
        url: "u",
        startedAt: "x",
      }),
    ],
  ])("takes over a stale lock %s", (_name, stale) => {
    const lock = stale();
    writeLock(lock);
    expect(acquireDevLock(dir, "http://127.0.0.1:8953")).toEqual({ acquired: true, tookOverFrom: lock });
    expect(readDevLock(dir)?.pid).toBe(process.pid);
  });

  it("releases only its own lock", () => {
    const other = { ...identify(process.ppid), url: "u", startedAt: "x" };
    writeLock(other);
    releaseDevLock(dir);
    expect(readDevLock(dir)).toEqual(other);
    releaseDevLock(dir, process.ppid);
    expect(readDevLock(dir)).toBeNull();
  });
});
