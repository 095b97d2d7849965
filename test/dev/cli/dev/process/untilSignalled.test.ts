import { spawn } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";

const UNTIL_SIGNALLED = path.resolve(import.meta.dirname, "../../../../../src/dev/cli/dev/process/untilSignalled.ts");

/**
 * A process that, like `platform dev`, has another library's signal listener (Miniflare's exit hook) until
 * it reaches untilSignalled(), and receives `signal` while its last synchronous start-up steps run.
 * Resolves with what it printed and its exit code; it gives up by itself (exit 3) if no listener ever runs.
 */
function runSignalledDuringStartUp(
  signal: "SIGINT" | "SIGTERM" | "SIGHUP",
): Promise<{ code: number | null; output: string }> {
  const script = `
    const { untilSignalled } = await import(${JSON.stringify(UNTIL_SIGNALLED)});
    process.on(${JSON.stringify(signal)}, () => { console.log("the other listener ran"); process.exit(2); });
    process.kill(process.pid, ${JSON.stringify(signal)});
    for (const until = Date.now() + 50; Date.now() < until; );
    setTimeout(() => { console.log("no listener ran"); process.exit(3); }, 3_000);
    await untilSignalled(async () => console.log("stopped"));
    process.exit(0);
  `;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", script]);
    let output = "";
    child.stdout.on("data", (data) => (output += data));
    child.stderr.on("data", (data) => (output += data));
    child.on("close", (code) => resolve({ code, output }));
  });
}

describe("untilSignalled", () => {
  it.each(["SIGINT", "SIGTERM", "SIGHUP"] as const)(
    "stops on a %s that arrived just before it took the handlers over (it was lost, and the process ran on)",
    async (signal) => {
      const { code, output } = await runSignalledDuringStartUp(signal);
      expect(output).toBe(`\n${signal}: stopping…\nstopped\n`);
      expect(code).toBe(0);
    },
  );
});
