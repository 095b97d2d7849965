import { mkdirSync } from "node:fs";
import { CliError } from "../../commandLine.ts";
import { acquireDevLock, releaseDevLock } from "./devLock.ts";
import { stopLeftovers } from "./leftoverProcesses.ts";
import { describePortInUse, isPortFree } from "./portOwner.ts";
import { startProcessWatchdog } from "./processWatchdog.ts";

export interface StateDirHold {
  stateDir: string;
  host: string;
  port: number;
  /** For the refusal: "platform dev is already running for <folder> (pid N, URL)". */
  command: "platform dev" | "platform up";
  /** The folder the user named: the project for `platform dev`, the state folder for `platform up`. */
  folder: string;
}

/**
 * Runs `run` as the one `platform dev` or `platform up` of `stateDir`: takes
 * the folder's lock (refusing, exit 1, while another process holds it), stops
 * what a killed predecessor left running, starts the watchdog and checks the
 * port is free; the lock and watchdog are let go however `run` ends.
 */
export async function holdStateDir(hold: StateDirHold, run: () => Promise<void>): Promise<void> {
  const { stateDir, host, port } = hold;
  mkdirSync(stateDir, { recursive: true });
  const lock = acquireDevLock(stateDir, `http://${host}:${port}`);
  if (!lock.acquired)
    throw new CliError(
      `${hold.command} is already running for ${hold.folder} (pid ${lock.holder.pid}, ${lock.holder.url})`,
      1,
      { bare: true },
    );
  let watchdog: { stop(): void } | undefined;
  try {
    for (const line of await stopLeftovers(stateDir)) console.log(line);
    watchdog = startProcessWatchdog(stateDir);
    if (!(await isPortFree(host, port))) throw new CliError(describePortInUse(host, port, stateDir));
    await run();
  } finally {
    releaseDevLock(stateDir);
    watchdog?.stop();
  }
}
