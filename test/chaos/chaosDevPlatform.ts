import { writeFileSync } from "node:fs";
import path from "node:path";
import { type DevProcess, startDev } from "#test/support/e2e/cliProcess.ts";
import { initProject, killTree } from "#test/support/e2e/workflowProjects.ts";
import type { ChaosPlatform } from "./chaosPlatform.ts";
import { chaosProjectSource } from "./chaosProjectSource.ts";

/** The chaos project under `platform dev` (workerd, or `--node`), its state in `<dir>/.platform/`, the ledger in .dev.vars. */
export async function startDevPlatform(options: {
  dir: string;
  node: boolean;
  port: number;
  ledgerUrl: string;
}): Promise<ChaosPlatform> {
  const { dir, port } = options;
  await initProject(dir, chaosProjectSource(0));
  writeFileSync(path.join(dir, ".dev.vars"), `CHAOS_LEDGER_URL=${options.ledgerUrl}\n`);
  const args = [dir, ...(options.node ? ["--node"] : []), "--port", String(port)];
  let dev: DevProcess = await startDev(args, { readyTimeoutMs: 120_000 });
  return {
    url: dev.url,
    fetch,
    target: {
      pid: () => dev.child.pid!,
      restart: async () => {
        dev = await startDev(args, { readyTimeoutMs: 120_000 });
      },
    },
    async stop() {
      const stopped = dev.child.exitCode === null ? await Promise.race([dev.stop("SIGTERM"), timeout(10_000)]) : null;
      if (dev.child.exitCode === null && dev.child.signalCode === null && stopped === null)
        await killTree(dev.child.pid!);
    },
  };
}

function timeout(ms: number): Promise<null> {
  return new Promise((resolve) => setTimeout(() => resolve(null), ms));
}
