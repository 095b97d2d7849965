import { spawn } from "node:child_process";
import path from "node:path";
import { stripVTControlCharacters } from "node:util";

export interface WranglerOutput {
  stdout: string;
  stderr: string;
}

/** Runs one wrangler command; rejects with `WranglerFailed` on a non-zero exit. */
export type Wrangler = (args: string[], options?: { echo?: (line: string) => void }) => Promise<WranglerOutput>;

export class WranglerFailed extends Error {
  readonly code = "wrangler_failed";
  readonly args: string[];
  readonly output: WranglerOutput;
  constructor(args: string[], output: WranglerOutput, exitCode: number | null) {
    const last = `${output.stderr}\n${output.stdout}`
      .split("\n")
      .map((line) => line.trim())
      .filter(Boolean)
      .slice(-8)
      .join("\n  ");
    super(`\`wrangler ${args.join(" ")}\` failed (exit ${exitCode}):\n  ${last}`);
    this.args = args;
    this.output = output;
  }
}

/** Keeps wrangler's output plain and free of prompts, banners, update checks and telemetry. */
const QUIET = { FORCE_COLOR: "0", NO_COLOR: "1", WRANGLER_HIDE_BANNER: "true", WRANGLER_SEND_METRICS: "false" };

/**
 * The environment of a dry run: no Cloudflare credential of any kind, a
 * fresh empty home (so no stored `wrangler login` either) and every proxy
 * pointed at a closed local port, so any attempt to reach the network or an
 * account fails loudly instead of succeeding quietly.
 */
export function offlineEnvironment(base: NodeJS.ProcessEnv, home: string): NodeJS.ProcessEnv {
  const unreachable = "http://127.0.0.1:9";
  const kept = Object.fromEntries(
    ["PATH", "TMPDIR", "LANG", "SystemRoot"].flatMap((name) => (base[name] ? [[name, base[name]]] : [])),
  );
  return {
    ...kept,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, ".config"),
    HTTPS_PROXY: unreachable,
    HTTP_PROXY: unreachable,
    https_proxy: unreachable,
    http_proxy: unreachable,
  };
}

/**
 * Runs the repository's pinned wrangler (node_modules/.bin/wrangler) with
 * this Node, non-interactively (stdin closed, output piped: wrangler then
 * takes its non-interactive defaults, e.g. confirms migrations).
 */
export function createWrangler(options: { repoRoot: string; env: NodeJS.ProcessEnv }): Wrangler {
  const bin = path.join(options.repoRoot, "node_modules/.bin/wrangler");
  return (args, { echo } = {}) =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [bin, ...args], {
        cwd: options.repoRoot,
        env: { ...options.env, ...QUIET },
        stdio: ["ignore", "pipe", "pipe"],
      });
      const output = { stdout: "", stderr: "" };
      // Echoed line by line: a chunk may end mid-line.
      const partial = { stdout: "", stderr: "" };
      const echoLines = (lines: string[]) => {
        for (const line of lines) if (echo && line.trim()) echo(line);
      };
      const collect = (stream: "stdout" | "stderr") => (chunk: Buffer) => {
        const text = stripVTControlCharacters(chunk.toString("utf8"));
        output[stream] += text;
        const lines = (partial[stream] + text).split("\n");
        partial[stream] = lines.pop() ?? "";
        echoLines(lines);
      };
      child.stdout.on("data", collect("stdout"));
      child.stderr.on("data", collect("stderr"));
      child.on("error", reject);
      child.on("close", (exitCode) => {
        echoLines([partial.stdout, partial.stderr]);
        if (exitCode === 0) resolve(output);
        else reject(new WranglerFailed(args, output, exitCode));
      });
    });
}
