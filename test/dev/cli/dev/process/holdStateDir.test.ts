import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { devLockPath, readDevLock } from "#src/dev/cli/dev/process/devLock.ts";
import { holdStateDir } from "#src/dev/cli/dev/process/holdStateDir.ts";
import { identify } from "#src/dev/cli/dev/process/processInfo.ts";

const HOST = "127.0.0.1";

function listen(): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, HOST, () => resolve(server));
  });
}

let dir: string;
let busy: Server;
beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "hold-state-"));
  busy = await listen();
});
afterEach(() => {
  busy.close();
  rmSync(dir, { recursive: true, force: true });
});

const hold = (port: number) => ({ stateDir: dir, host: HOST, port, command: "platform up" as const, folder: dir });

describe("one platform dev or up per state folder", () => {
  it("refuses, naming the holder, while another live process holds the folder", async () => {
    const holder = { ...identify(process.ppid), url: "http://127.0.0.1:8951", startedAt: "x" };
    writeFileSync(devLockPath(dir), JSON.stringify(holder));
    const run = vi.fn(async () => {});
    await expect(holdStateDir(hold(8952), run)).rejects.toMatchObject({
      message: `platform up is already running for ${dir} (pid ${process.ppid}, http://127.0.0.1:8951)`,
      exitCode: 1,
      bare: true,
    });
    expect(run).not.toHaveBeenCalled();
    expect(readDevLock(dir)).toEqual(holder);
  });

  it("refuses a port that is in use, and lets the folder go", async () => {
    const run = vi.fn(async () => {});
    await expect(holdStateDir(hold((busy.address() as AddressInfo).port), run)).rejects.toThrow(
      /Address already in use/,
    );
    expect(run).not.toHaveBeenCalled();
    expect(readDevLock(dir)).toBeNull();
  });

  it("holds the folder while running, and lets it go when the run fails", async () => {
    const port = (busy.address() as AddressInfo).port;
    await new Promise((resolve) => busy.close(resolve));
    let heldBy: number | undefined;
    const failure = new Error("start-up failed");
    await expect(
      holdStateDir(hold(port), async () => {
        heldBy = readDevLock(dir)?.pid;
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(heldBy).toBe(process.pid);
    expect(readDevLock(dir)).toBeNull();
  });
});
