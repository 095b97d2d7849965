import { createServer } from "node:net";
import { readRecordedProcesses, describeProcess } from "./leftoverProcesses.ts";
import { commandOf, listenerOnPort } from "./processInfo.ts";

/** Whether `port` can be listened on at `host` right now. */
export function isPortFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", (error: NodeJS.ErrnoException) =>
      error.code === "EADDRINUSE" || error.code === "EACCES" ? resolve(false) : reject(error),
    );
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/**
 * "Address already in use", said usefully: who holds the port, and whether it
 * is this folder's own previous `platform dev` (a pid its watchdog recorded)
 * or someone else, with how to stop it.
 */
export function describePortInUse(host: string, port: number, stateDir: string): string {
  const pid = listenerOnPort(port);
  const head = `Address already in use: port ${port} on ${host}`;
  if (pid === null) return `${head} is held by a process this user cannot inspect; pass --port N.`;
  const file = readRecordedProcesses(stateDir);
  const owner = describeProcess({ pid, command: commandOf(pid) });
  // Only a record this machine's platform dev signed may call the holder ours.
  const recorded = file.kind === "verified" ? file.recorded : null;
  const ours = recorded && (recorded.parent.pid === pid || recorded.processes.some((p) => p.pid === pid));
  return ours
    ? `${head} is held by ${owner}, this folder's previous platform dev; stop it with \`kill ${pid}\`.`
    : `${head} is held by ${owner}, not this folder's platform dev; stop it with \`kill ${pid}\` or pass --port N.`;
}
