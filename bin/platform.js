#!/usr/bin/env node
// The `platform` command. It must start under any Node (a plain shell may have
// Node 20), but the CLI itself needs Node >= 22.12 (wrangler, Miniflare, type
// stripping), so it re-runs itself under the Node 22 this repository installs
// as a devDependency and relays signals and the exit code.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const main = path.join(repo, "src/dev/cli/main.ts");
const [major, minor] = process.versions.node.split(".").map(Number);
const modern = major > 22 || (major === 22 && minor >= 12);

if (modern && process.features.typescript) {
  await import(pathToFileURL(main).href);
} else {
  const node22 = path.join(repo, "node_modules/node/bin/node");
  if (!existsSync(node22)) {
    console.error(`platform: needs Node >= 22.12; run \`npm install\` in ${repo} to install it.`);
    process.exit(1);
  }
  // fd 3: a pipe the child watches; it closes when this process ends, however (see stopWhenWrapperDies in main.ts).
  const child = spawn(node22, [main, ...process.argv.slice(2)], {
    stdio: ["inherit", "inherit", "inherit", "pipe"],
    env: { ...process.env, PLATFORM_WRAPPER_PIPE_FD: "3" },
  });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(signal, () => child.kill(signal));
  }
  child.on("exit", (code, signal) => {
    if (signal) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
}
