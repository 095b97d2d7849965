import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { PLUGIN_IDS } from "../../../contracts/pluginRegistry.ts";
import { PlatformError } from "../../../core/errors.ts";
import { refuseLinksOutOfProject } from "../linksOutOfProject.ts";
import { CliError, type Command } from "../commandLine.ts";
import { formatRequestLine, type RequestRecord } from "../dev/output/devLogLines.ts";
import { clearDevSession, stateDirFor, writeDevSession } from "../dev/state/devState.ts";
import { followWorkflowSteps } from "../dev/output/followWorkflowSteps.ts";
import { holdStateDir } from "../dev/process/holdStateDir.ts";
import { LOCAL_IDP_PASSWORD, LOCAL_IDP_USERS } from "../dev/providers/localIdentityProvider.ts";
import { LOCAL_DOMAIN, startLocalPlatform, type LocalPlatform } from "../dev/workerd/localPlatform.ts";
import { driveMinuteCron } from "../dev/crons/minuteCronDriver.ts";
import { startNodeProjectServer } from "../dev/node/nodeProjectServer.ts";
import { type ProjectWatcher, watchProjectTree } from "../dev/watch/projectWatcher.ts";
import { triggersRebuild } from "../dev/watch/rebuildTrigger.ts";
import { untilSignalled } from "../dev/process/untilSignalled.ts";
import { isProjectFolder, projectFolder } from "../projectFolder.ts";
import { DEMO_PROJECT_DIR } from "../repoPaths.ts";

const HOST = "127.0.0.1";
const IGNORED = /(^|[\\/])(\.platform|node_modules|\.git)([\\/]|$)/;

function parsePort(value: string | boolean | undefined): number {
  if (value === undefined) return 8787;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new CliError(`--port must be a port number, got "${value}".`, 2);
  return port;
}

/**
 * Rebuilds when a file the build reads changes (`triggersRebuild`: its sources, `.dev.vars`), one
 * build at a time, keeping the old version when a build fails to build or to load; a project that
 * never ran (`build` null) keeps its problem page.
 */
function watchProject(
  projectDir: string,
  platform: { rebuild(): Promise<unknown>; readonly build: { readonly inputs: readonly string[] } | null },
): ProjectWatcher {
  let timer: NodeJS.Timeout | undefined;
  let building: Promise<void> = Promise.resolve();
  let failed = false;
  const rebuild = () => {
    building = building.then(async () => {
      const started = Date.now();
      try {
        await platform.rebuild();
        failed = false;
        console.log(`Rebuilt in ${Date.now() - started} ms`);
      } catch (error) {
        failed = true;
        const message = error instanceof PlatformError || error instanceof Error ? error.message : String(error);
        console.error(
          platform.build === null
            ? `Build failed; the project's address says so until a save fixes it: ${message}`
            : `Build failed, still serving the previous version: ${message}`,
        );
      }
    });
  };
  return watchProjectTree(projectDir, IGNORED, (changed) => {
    if (!triggersRebuild(projectDir, changed, { inputs: platform.build?.inputs ?? null, failed })) return;
    clearTimeout(timer);
    timer = setTimeout(rebuild, 150);
  });
}

const RECOVERY_CRON = "__workflow-recovery";

/**
 * A run whose alarm did not survive the previous `platform dev` (killed
 * between writing an event and setting the alarm, or an alarm store that was
 * not persisted) would otherwise wait for the minute cron. Run the project's
 * recovery sweep once right after start-up, and once more when the longest
 * step timeout has passed (a step that was running when the old process died
 * counts as stuck only then), if that comes before the next minute tick.
 * Only the recovery cron runs: the project's own crons keep their schedule.
 */
function sweepAtStartup(platform: LocalPlatform): { stop(): void } {
  const crons = (platform.metadata.crons ?? []) as { name: string }[];
  if (!crons.some((cron) => cron.name === RECOVERY_CRON)) return { stop() {} };
  // A sweep still in flight when `platform dev` stops fails with the platform: that is no news to print.
  let stopped = false;
  const sweep = async () => {
    try {
      const response = await fetch(`${platform.apiUrl}/projects/${platform.project.slug}/crons/${RECOVERY_CRON}/run`, {
        method: "POST",
        headers: { authorization: `Bearer ${platform.cliToken}` },
      });
      const body = (await response.json().catch(() => null)) as {
        output?: string;
        error?: { message?: string };
      } | null;
      if (!response.ok) console.error(`The start-up recovery sweep failed: ${body?.error?.message ?? response.status}`);
      else if (body?.output) console.log(`Recovery sweep: ${body.output}`);
    } catch (error) {
      if (!stopped) console.error("The start-up recovery sweep failed:", error);
    }
  };
  void sweep();
  const workflows = (platform.metadata.workflows ?? []) as {
    stepTimeoutMS?: number;
    stepOptions?: Record<string, { stepTimeoutMS?: number }>;
  }[];
  const timeouts = workflows.flatMap((w) => [
    w.stepTimeoutMS ?? 0,
    ...Object.values(w.stepOptions ?? {}).map((step) => step.stepTimeoutMS ?? 0),
  ]);
  const longest = Math.max(0, ...timeouts);
  const again = longest + 250;
  let timer: NodeJS.Timeout | undefined;
  if (longest > 0 && again < 60_000 - (Date.now() % 60_000)) timer = setTimeout(() => void sweep(), again);
  return {
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/** Why start-up failed: our own errors whole (code frames, the project's stack), others' first line. */
function startFailureMessage(error: unknown): string {
  if (error instanceof PlatformError) return error.message;
  return (error instanceof Error ? error.message : String(error)).split("\n")[0]!;
}

/** `platform dev --node`: the project alone in this Node process (see nodeProjectServer.ts). */
async function runNodeDev(
  projectDir: string,
  stateDir: string,
  port: number,
  onRequest: (request: RequestRecord) => void,
  markReady: () => void,
): Promise<void> {
  // node:sqlite is stable enough for local state; its "experimental" notice is noise on every start.
  const emitWarning = process.emitWarning.bind(process);
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    if (/SQLite is an experimental feature/.test(String(warning instanceof Error ? warning.message : warning))) return;
    (emitWarning as (...args: unknown[]) => void)(warning, ...rest);
  }) as typeof process.emitWarning;
  // Project code runs in this process: an error it throws outside a request must not end `platform dev`.
  process.on("uncaughtException", (error) => console.error("Uncaught error in project code:", error));
  process.on("unhandledRejection", (reason) => console.error("Unhandled rejection in project code:", reason));
  const server = await startNodeProjectServer({ projectDir, stateDir, port, onRequest }).catch((error: unknown) => {
    throw new CliError(startFailureMessage(error));
  });
  // `platform workflow …` finds the Node server's stand-in for the API worker here.
  writeDevSession(stateDir, {
    pid: process.pid,
    slug: server.slug,
    url: server.url,
    apiUrl: server.apiUrl,
    cliToken: server.cliToken,
  });
  const watcher = watchProject(projectDir, server);
  console.log(`Project "${server.slug}" from ${projectDir} in Node ${process.versions.node} (no workerd)`);
  if (server.build.capabilities.workflow)
    console.log(`  workflows in ${path.relative(projectDir, server.workflowsPath)}`);
  console.log(`Ready on ${server.url}`);
  markReady();
  await untilSignalled(async () => {
    watcher.close();
    await server.stop();
  });
}

export const devCommand: Command = {
  summary: "Run a project and every platform service it needs on this machine.",
  usage: "platform dev [dir] [--port N] [--node] [--login form|oidc] [--private] [--quiet] [--platform-frames]",
  help: `
Runs the gateway, the API worker, the plugin workers (${PLUGIN_IDS.join(", ")})
with a fake provider each, and the project (workerd through Miniflare),
with state kept in <dir>/.platform/ across restarts. Prints
"Ready on http://127.0.0.1:N" once the project answers there, and just
before it the console's address (\`platform console\` opens it signed in; the
address stays the same across restarts while its port is free). Rebuilds on
source change. Prints one line per request (\`GET /path → 200 in 3 ms\`) and
per workflow step (\`run 3f2a9c1d: charge#2 completed in 3 ms → pack\`).
Stacks (a failed step's, a handler's error) name the project's sources
(\`src/index.ts:14:22\`), each run of the platform's own frames one line,
\`… 3 platform frames\`, as \`platform logs\` prints them.
Stops cleanly on Ctrl-C or SIGTERM; if it is killed outright (SIGKILL), a
watchdog stops workerd and the other processes it started.

One \`platform dev\` per folder: a second one exits with the first one's pid
and address (<dir>/.platform/dev.lock). Processes a killed \`platform dev\`
left running are stopped at the next start when they are provably its own.

Without a dir it runs the project in the current folder (one whose
package.json depends on "platform", or with a src/index.ts); in this
repository's own root, where there is none, the bundled demo project.

Options:
  --port N   port for the project (default 8787)
  --node     run the project in this plain Node 22 process instead of workerd
  --login M  sign-in: "form" (default) shows the local dummy login form;
             "oidc" runs the login worker and a local OpenID Connect
             provider, so /api/auth/signin/idp goes through the deployed
             flow (provider login page, callback token, session)
  --private  run the project as a private deployment, served at
             http://localhost:N/<slug>/ (instead of http://<slug>.localhost:N/)
  --public   apply the proxy rate of a deployed public project (3 plugin
             actions per 60 s); without it the local project is a private
             deployment, which has none (the first call a public project
             would have had refused prints a note)
  --quiet    no request and workflow step lines
  --platform-frames
             print the platform's own frames of stacks too (workerd)

With --login oidc the login worker returns browsers to the project's own
address (http://<slug>.localhost:N/, or http://localhost:N/<slug>/ with
--private), so sign in from there. The provider's test users are
${LOCAL_IDP_USERS.map((u) => u.email + (u.emailVerified ? "" : " (email not verified)")).join(", ")};
the password is "${LOCAL_IDP_PASSWORD}".

With --node the project is bundled for Node and served over node:http at
http://127.0.0.1:N/ through the same platform wrapper (same routes, same
errors). Workflows run on node:sqlite (<dir>/.platform/node/workflows.sqlite)
with a zero-delay timer loop, a recovery sweep at start-up and every minute
("Re-enqueued N workflow(s)"); runs survive restarts. It does not run the
gateway (no <slug>.localhost address), the API worker (only its workflow
routes, under /__platform/api for \`platform workflow …\`; no console, no
deploy API, no step lines), D1, queues or Durable Objects, and internal
routes (/__workflow, /__cron, …) answer 404.
Sign-in and plugins will come later. Worker builds (\`platform dev\` without
--node, \`platform push\`) still refuse code that imports platform/node or
node:sqlite.`,
  options: {
    port: { type: "string", short: "p" },
    node: { type: "boolean" },
    login: { type: "string" },
    private: { type: "boolean" },
    public: { type: "boolean" },
    quiet: { type: "boolean", short: "q" },
    "platform-frames": { type: "boolean" },
  },
  async run({ positionals, values }) {
    if (positionals.length > 1) throw new CliError("platform dev takes at most one directory.", 2);
    const projectDir = projectFolder(positionals[0]);
    if (positionals[0] === undefined && projectDir !== DEMO_PROJECT_DIR && !isProjectFolder(projectDir))
      throw new CliError(
        `There is no project in ${projectDir} (no package.json depending on "platform", no src/index.ts): run \`platform init .\` to make one here, or \`platform dev <dir>\` for another folder.`,
      );
    const port = parsePort(values.port);
    const stateDir = stateDirFor(projectDir);
    const login = values.login ?? "form";
    if (login !== "form" && login !== "oidc")
      throw new CliError(`--login must be "form" or "oidc", got "${login}".`, 2);
    if (values.node && (login === "oidc" || values.private || values.public || values["platform-frames"]))
      throw new CliError(
        "--login oidc, --private, --public and --platform-frames run in workerd; leave out --node.",
        2,
      );
    if (!existsSync(projectDir)) throw new CliError(`There is no folder ${projectDir}.`);
    if (!statSync(projectDir).isDirectory()) throw new CliError(`${projectDir} is not a folder.`);
    refuseLinksOutOfProject(projectDir, stateDir);

    await holdStateDir({ stateDir, host: HOST, port, command: "platform dev", folder: projectDir }, async () => {
      try {
        // Request and step lines start with the Ready line (start-up's own probes are not the user's requests).
        let ready = false;
        const print = (line: string) => {
          if (ready && !values.quiet) console.log(line);
        };
        const onRequest = (request: RequestRecord) => print(formatRequestLine(request));
        const markReady = () => {
          ready = true;
        };
        if (values.node) await runNodeDev(projectDir, stateDir, port, onRequest, markReady);
        else
          await runWorkerdDev(projectDir, stateDir, port, login, onRequest, print, markReady, {
            private: values.private === true,
            publicLimits: values.public === true,
            platformFrames: values["platform-frames"] === true,
          });
      } finally {
        clearDevSession(stateDir);
      }
    });
  },
};

async function runWorkerdDev(
  projectDir: string,
  stateDir: string,
  port: number,
  login: "form" | "oidc",
  onRequest: (request: RequestRecord) => void,
  print: (line: string) => void,
  markReady: () => void,
  deployment: { private: boolean; publicLimits: boolean; platformFrames: boolean },
): Promise<void> {
  const platform = await startLocalPlatform({
    projectDir,
    stateDir,
    port,
    host: HOST,
    login,
    ...deployment,
    onRequest,
  }).catch((error: unknown) => {
    throw new CliError(startFailureMessage(error));
  });
  writeDevSession(stateDir, {
    pid: process.pid,
    slug: platform.project.slug,
    url: platform.url,
    apiUrl: platform.apiUrl,
    cliToken: platform.cliToken,
  });
  const watcher = watchProject(projectDir, platform);
  const cron = driveMinuteCron(
    (minute) => platform.runScheduled(minute),
    (error) => console.error("The minute cron failed:", error),
  );

  console.log(`Project "${platform.project.slug}" from ${projectDir}`);
  if (deployment.private) console.log(`  private deployment at ${platform.projectUrl}`);
  else console.log(`  also at http://${platform.project.slug}.${LOCAL_DOMAIN}:${port}/`);
  console.log(`  API worker at ${platform.apiUrl}`);
  if (deployment.publicLimits) console.log("  public limits: 3 plugin actions per 60 s, as deployed (--public)");
  if (platform.login) {
    console.log(`  login worker at ${platform.login.url}`);
    console.log(
      `  identity provider at ${platform.login.issuer} (users ${LOCAL_IDP_USERS.map((u) => u.email).join(", ")}; password "${LOCAL_IDP_PASSWORD}")`,
    );
    console.log(`  sign in from ${platform.projectUrl}: the login worker returns there`);
  }
  for (const id of ["chatserver", "workspace", "email"] as const) {
    console.log(`  ${id} plugin at ${platform.plugins.plugins[id]} (fake provider at ${platform.plugins.fakes[id]})`);
  }
  // The CLI token stays in .platform/dev.json: `platform console` opens the console signed in.
  console.log(`Console at ${platform.apiUrl}/console/ (\`platform console\` opens it signed in)`);
  if (platform.problem) {
    console.error(`The project does not run: ${platform.problem}`);
    console.error(`Its address answers 503 with this message until a save fixes it (the console and the API run).`);
  }
  console.log(`Ready on ${platform.url}`);
  markReady();
  const startupSweep = sweepAtStartup(platform);
  const steps = followWorkflowSteps({
    apiUrl: platform.apiUrl,
    token: platform.cliToken,
    slug: platform.project.slug,
    print,
    active: () => platform.build?.capabilities.workflow === true,
    platformFrames: deployment.platformFrames,
  });

  await untilSignalled(async () => {
    watcher.close();
    cron.stop();
    startupSweep.stop();
    steps.stop();
    await platform.stop();
  });
}
