import { spawn, type ChildProcess } from "node:child_process";
import { cliModulePath } from "../../repoPaths.ts";

const WATCHDOG = cliModulePath(import.meta.url, "./watchdogProcess");

/**
 * Makes the processes `platform dev` spawns (workerd through Miniflare,
 * esbuild) die with it however it ends, SIGKILL included, which no handler in
 * this process can see: a small detached process holds the read end of a
 * pipe from this one, and stops them when it closes. `stop()` after a clean
 * shutdown lets it go.
 */
export function startProcessWatchdog(stateDir: string): { stop(): void } {
  const child: ChildProcess = spawn(process.execPath, [WATCHDOG, String(process.pid), stateDir], {
    // Its own process group: a Ctrl-C in the terminal must not stop it before it has stopped the others.
    detached: true,
    stdio: ["pipe", "ignore", "inherit"],
  });
  child.unref();
  // Nor may the pipe keep this process running.
  (child.stdin as unknown as { unref(): void }).unref();
  return {
    stop() {
      child.stdin?.end();
    },
  };
}
