import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
export const PLATFORM_BIN = path.join(REPO, "bin/platform.js");

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real `platform` command to completion. */
export function runCli(
  args: string[],
  options: { node?: string; cwd?: string; timeoutMS?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(options.node ?? process.execPath, [PLATFORM_BIN, ...args], {
      cwd: options.cwd ?? REPO,
      env: { ...process.env, ...options.env, NO_COLOR: "1" },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`platform ${args.join(" ")} did not finish in time.\n${stdout}\n${stderr}`));
    }, options.timeoutMS ?? 60_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** How long `stop()` waits for the process to end before it kills it and fails. */
const STOP_TIMEOUT_MS = 30_000;

export interface DevProcess {
  child: ChildProcess;
  url: string;
  output(): string;
  /** Waits for a line matching `pattern` in the output. */
  waitFor(pattern: RegExp, timeoutMS?: number): Promise<RegExpMatchArray>;
  /** Sends a signal and resolves with how long the process took to exit. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; ms: number }>;
}

/** Starts `platform dev` and resolves once it prints its Ready line. */
export function startDev(
  args: string[],
  options: { node?: string; readyTimeoutMs?: number } = {},
): Promise<DevProcess> {
  return startServing(options.node ?? process.execPath, [PLATFORM_BIN, "dev", ...args], options);
}

/** Starts any command that ends up in `platform dev` (e.g. `npm run dev`) and resolves once it prints Ready. */
export async function startServing(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; readyTimeoutMs?: number } = {},
): Promise<DevProcess> {
  const child = spawn(command, args, {
    cwd: options.cwd ?? REPO,
    env: { ...(options.env ?? process.env), NO_COLOR: "1" },
  });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));

  const waitFor = (pattern: RegExp, timeoutMS = 60_000) => waitForOutput(child, () => output, pattern, timeoutMS);

  const ready = await waitFor(/Ready on (http:\/\/127\.0\.0\.1:\d+)/, options.readyTimeoutMs ?? 90_000);
  return {
    child,
    url: ready[1]!,
    output: () => output,
    waitFor,
    async stop(signal = "SIGTERM") {
      const started = Date.now();
      if (child.exitCode === null) child.kill(signal);
      // A process that does not end is killed and reported with its output and its state, rather than hanging the test.
      let stuck = "";
      const timer = setTimeout(() => {
        stuck = describeProcessState(child.pid!);
        child.kill("SIGKILL");
      }, STOP_TIMEOUT_MS);
      const code = await exited;
      clearTimeout(timer);
      const ms = Date.now() - started;
      if (ms >= STOP_TIMEOUT_MS)
        throw new Error(
          `${command} ${args.join(" ")} did not end ${STOP_TIMEOUT_MS} ms after ${signal}. Its state then:\n${stuck}\nOutput:\n${output}`,
        );
      return { code, ms };
    },
  };
}

/** Polls a process's output until `pattern` matches; fails once the process has exited or `timeoutMS` passed. */
export function waitForOutput(
  child: ChildProcess,
  output: () => string,
  pattern: RegExp,
  timeoutMS: number,
): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const poll = setInterval(() => {
      const match = output().match(pattern);
      if (match) {
        clearInterval(poll);
        resolve(match);
      } else if (child.exitCode !== null || Date.now() - started > timeoutMS) {
        clearInterval(poll);
        reject(new Error(`Did not see ${pattern} (exit ${child.exitCode}). Output:\n${output()}`));
      }
    }, 50);
  });
}

/** Every descendant of a process, read from /proc (Linux). */
export function descendantsOf(pid: number): number[] {
  const children: number[] = [];
  try {
    const tasks = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim();
    for (const child of tasks ? tasks.split(/\s+/).map(Number) : []) {
      children.push(child, ...descendantsOf(child));
    }
  } catch {
    // The process is gone.
  }
  return children;
}

/** Running (a zombie waiting for a reaper counts as ended), described by its command line for failure messages. */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

export function describeProcess(pid: number): string {
  try {
    return `${pid} ${readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").slice(0, 160)}`;
  } catch {
    return `${pid} (gone)`;
  }
}

/**
 * What /proc says of a process that does not answer a signal: its signal
 * masks (is the signal pending, blocked, caught?) and where each thread waits.
 */
export function describeProcessState(pid: number): string {
  const read = (file: string) => {
    try {
      return readFileSync(file, "utf8").trim();
    } catch {
      return "(unreadable)";
    }
  };
  const status = read(`/proc/${pid}/status`)
    .split("\n")
    .filter((line) => /^(State|SigQ|SigPnd|ShdPnd|SigBlk|SigIgn|SigCgt|Threads):/.test(line));
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    // gone
  }
  const threads = tasks.map((task) => {
    const stat = read(`/proc/${pid}/task/${task}/stat`);
    const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return `  ${task} ${name} ${state} wchan=${read(`/proc/${pid}/task/${task}/wchan`)} blocked=${read(`/proc/${pid}/task/${task}/status`).match(/SigBlk:\s*(\S+)/)?.[1]}`;
  });
  return [...status, "threads:", ...threads].join("\n");
}

/** The system's own Node (20 here), as a plain shell would find it: not the repository's Node 22. */
export function systemNode(): string | null {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (dir.includes("node_modules")) continue;
    const candidate = path.join(dir, "node");
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return null;
}

/** What `platform dev` keeps in `<dir>/.platform/dev.json` while it runs. */
export interface DevSessionFile {
  pid: number;
  slug: string;
  url: string;
  apiUrl: string;
  cliToken: string;
}

export function devSession(projectDir: string): DevSessionFile {
  return JSON.parse(readFileSync(path.join(projectDir, ".platform/dev.json"), "utf8")) as DevSessionFile;
}

/** The console link that signs a browser in (what `platform console` opens); `platform dev` no longer prints it. */
export function signedInConsoleUrl(projectDir: string): string {
  const session = devSession(projectDir);
  return `${session.apiUrl}/console/#token=${session.cliToken}`;
}

/** A PATH like a plain shell's: without this repository's node_modules/.bin (so `node` is the system one). */
export function plainShellPath(): string {
  return (process.env.PATH ?? "")
    .split(path.delimiter)
    .filter((dir) => !dir.includes("node_modules"))
    .join(path.delimiter);
}
