import { spawn, type ChildProcess } from "node:child_process";
import { request } from "node:http";
import { PLATFORM_BIN, REPO } from "./cliProcess.ts";

export interface StreamingCli {
  child: ChildProcess;
  output(): string;
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves with the exit code once the process ended. */
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `platform <args>` and reads its output as it comes (for `platform up` and `platform login`). */
export function spawnCli(args: string[], env: NodeJS.ProcessEnv = {}): StreamingCli {
  const child = spawn(process.execPath, [PLATFORM_BIN, ...args], {
    cwd: REPO,
    env: { ...process.env, ...env, NO_COLOR: "1" },
  });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return {
    child,
    output: () => output,
    exited,
    waitFor: (pattern, timeoutMs = 90_000) =>
      new Promise<RegExpMatchArray>((resolve, reject) => {
        const started = Date.now();
        const poll = setInterval(() => {
          const match = output.match(pattern);
          if (match) {
            clearInterval(poll);
            resolve(match);
          } else if (child.exitCode !== null || Date.now() - started > timeoutMs) {
            clearInterval(poll);
            reject(new Error(`Did not see ${pattern} (exit ${child.exitCode}). Output:\n${output}`));
          }
        }, 50);
      }),
    async stop(signal = "SIGTERM") {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

/**
 * GET `url` on loopback with its own Host header: `http://<slug>.localhost:N/`
 * without relying on the resolver to know `*.localhost`.
 */
export function getOnLoopback(url: string): Promise<{ status: number; body: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port: target.port, path: target.pathname + target.search, headers: { host: target.host } },
      (res) => {
        let body = "";
        res.on("data", (d) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/** Polls `url` until its body matches `pattern` (a new deployment is served a moment after the push answers). */
export async function waitForBody(url: string, pattern: RegExp, timeoutMs = 30_000): Promise<string> {
  const started = Date.now();
  let last = "";
  while (Date.now() - started < timeoutMs) {
    try {
      const { body } = await getOnLoopback(url);
      if (pattern.test(body)) return body;
      last = body;
    } catch (error) {
      last = String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} never answered ${pattern}; last: ${last.slice(0, 300)}`);
}
