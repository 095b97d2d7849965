#!/usr/bin/env node
// The `platform` command. It must start under any Node (a plain shell may have
// Node 20), but the CLI itself needs Node >= 22.12 (Miniflare, node:sqlite, and
// in a checkout type stripping), so it re-runs itself under the Node 22 that
// comes with it (the `node` package: a devDependency of this repository, a
// dependency of the installed `platform` package) and relays signals and the
// exit code. Installed, it runs the compiled CLI in dist/; in a checkout, the
// TypeScript sources in src/.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const compiled = path.join(root, "dist/dev/cli/main.js");
const installed = existsSync(compiled);
const main = installed ? compiled : path.join(root, "src/dev/cli/main.ts");
const [major, minor] = process.versions.node.split(".").map(Number);
const modern = major > 22 || (major === 22 && minor >= 12);

/** The `node` package's binary, wherever npm put it (hoisted into the project, or beside this package). */
function bundledNode() {
  try {
    const binary = path.join(path.dirname(createRequire(import.meta.url).resolve("node/package.json")), "bin/node");
    return existsSync(binary) ? binary : null;
  } catch {
    return null;
  }
}

if (modern && (installed || process.features.typescript)) {
  await import(pathToFileURL(main).href);
} else {
  const node22 = bundledNode();
  if (!node22) {
    console.error(
      installed
        ? "platform: needs Node >= 22.12, which the `node` package installed with `platform` provides; run `npm install` in your project."
        : `platform: needs Node >= 22.12; run \`npm install\` in ${root} to install it.`,
    );
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
