import { watch, type FSWatcher } from "node:fs";
import path from "node:path";
import { PlatformError } from "../../shared/errors.ts";
import { CliError, type Command } from "../commandLine.ts";
import { clearDevSession, stateDirFor, writeDevSession } from "../dev/devState.ts";
import { LOCAL_DOMAIN, startLocalPlatform, type LocalPlatform } from "../dev/localPlatform.ts";
import { DEMO_PROJECT_DIR } from "../repoPaths.ts";

const SHUTDOWN_DEADLINE_MS = 4_000;
const IGNORED = /(^|[\\/])(\.platform|node_modules|\.git)([\\/]|$)/;

function parsePort(value: string | boolean | undefined): number {
  if (value === undefined) return 8787;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new CliError(`--port must be a port number, got "${value}".`, 2);
  return port;
}

/** Rebuilds on source change, one build at a time, keeping the old version when a build fails. */
function watchProject(projectDir: string, platform: LocalPlatform): FSWatcher {
  let timer: NodeJS.Timeout | undefined;
  let building: Promise<void> = Promise.resolve();
  const rebuild = () => {
    building = building.then(async () => {
      const started = Date.now();
      try {
        await platform.rebuild();
        console.log(`Rebuilt in ${Date.now() - started} ms`);
      } catch (error) {
        const message = error instanceof PlatformError ? error.message : String(error);
        console.error(`Build failed, still serving the previous version: ${message}`);
      }
    });
  };
  return watch(projectDir, { recursive: true }, (_event, file) => {
    if (file && IGNORED.test(file)) return;
    clearTimeout(timer);
    timer = setTimeout(rebuild, 150);
  });
}

/** Local crons never fire by themselves: drive the platform's every-minute trigger, on the minute. */
function driveMinuteCron(platform: LocalPlatform): { stop(): void } {
  let timer: NodeJS.Timeout;
  const schedule = () => {
    const delay = 60_000 - (Date.now() % 60_000);
    timer = setTimeout(async () => {
      try {
        await platform.runScheduled(new Date());
      } catch (error) {
        console.error("The minute cron failed:", error);
      }
      schedule();
    }, delay);
  };
  schedule();
  return { stop: () => clearTimeout(timer) };
}

export const devCommand: Command = {
  summary: "Run a project and every platform service it needs on this machine.",
  usage: "platform dev [dir] [--port N]",
  help: `
Runs the gateway, the API worker and the project (workerd through Miniflare),
with state kept in <dir>/.platform/ across restarts. Prints
"Ready on http://127.0.0.1:N" once the project answers there. Rebuilds on
source change. Stops cleanly on Ctrl-C or SIGTERM.

Without a dir it runs the bundled demo project.

Options:
  --port N   port for the project (default 8787)`,
  options: { port: { type: "string", short: "p" } },
  async run({ positionals, values }) {
    if (positionals.length > 1) throw new CliError("platform dev takes at most one directory.", 2);
    const projectDir = path.resolve(positionals[0] ?? DEMO_PROJECT_DIR);
    const port = parsePort(values.port);
    const stateDir = stateDirFor(projectDir);

    const platform = await startLocalPlatform({ projectDir, stateDir, port }).catch((error: unknown) => {
      throw new CliError(error instanceof Error ? error.message : String(error));
    });
    writeDevSession(stateDir, {
      pid: process.pid,
      slug: platform.project.slug,
      url: platform.url,
      apiUrl: platform.apiUrl,
      cliToken: platform.cliToken,
    });
    const watcher = watchProject(projectDir, platform);
    const cron = driveMinuteCron(platform);

    console.log(`Project "${platform.project.slug}" from ${projectDir}`);
    console.log(`  also at http://${platform.project.slug}.${LOCAL_DOMAIN}:${port}/`);
    console.log(`  API worker at ${platform.apiUrl}`);
    console.log(`Ready on ${platform.url}`);

    await new Promise<void>((resolve) => {
      let stopping = false;
      const stop = async (signal: string) => {
        if (stopping) return;
        stopping = true;
        console.log(`\n${signal}: stopping…`);
        const force = setTimeout(() => process.exit(1), SHUTDOWN_DEADLINE_MS);
        watcher.close();
        cron.stop();
        clearDevSession(stateDir);
        await platform.stop();
        clearTimeout(force);
        resolve();
      };
      // Miniflare's own signal hook exits at once and leaves workerd to die on
      // its own; take the signals over so shutdown awaits dispose().
      for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
        process.removeAllListeners(signal);
        process.on(signal, () => void stop(signal));
      }
    });
  },
};
