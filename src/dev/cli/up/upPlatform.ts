import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import path from "node:path";
import * as esbuild from "esbuild";
import type { V4WorkerOptions } from "miniflare";
import { convertV4MiniflareOptions, Miniflare } from "../../cloudflare/miniflareModule.ts";
import { createScriptUploadStandIn } from "../../cloudflare/scriptUploadStandIn.ts";
import { startInWorkerd } from "../../cloudflare/workerdScriptStarter.ts";
import { buildPlatformWorkers } from "../dev/workerd/buildPlatformWorkers.ts";
import { applyD1Migrations } from "../dev/workerd/d1Migrations.ts";
import { pluginWorkerNames, readDeployedWorkers } from "../dev/workerd/deployedWorkers.ts";
import type { RequestRecord } from "../dev/output/devLogLines.ts";
import { loadOrCreateCredentials } from "../dev/state/devState.ts";
import { dueCrons, type LocalCron, localCrons } from "../dev/crons/localCrons.ts";
import { API_WORKER, localPlatformConfig, startLocalLogin } from "../dev/workerd/localPlatform.ts";
import {
  LOCAL_PLUGIN_IDS,
  loadOrCreatePluginSecrets,
  localPluginUrls,
  writePluginUrls,
} from "../dev/providers/localPlugins.ts";
import { assignLocalPorts } from "../dev/workerd/localPorts.ts";
import { loadOrCreateMachineKey } from "../dev/process/machineKey.ts";
import { MIGRATIONS_DIR, REPO_ROOT } from "../repoPaths.ts";
import { frontWorker } from "./frontWorker.ts";
import { loadOrCreateOperatorToken } from "./operatorToken.ts";
import { createProjectInstances } from "./projectInstances.ts";
import { type PublicEntry, servePublicEntry } from "./publicEntry.ts";
import { replaySavedScripts, saveAcceptedScript } from "./savedScripts.ts";
import { serveStandIn } from "./standInServer.ts";
import { traceIntakeWorker } from "./traceIntake.ts";

export interface UpPlatformOptions {
  stateDir: string;
  port: number;
  host: string;
  log: (line: string) => void;
  onRequest?: (request: RequestRecord) => void;
  /** `--max-live-runs N`: the account's live-run budget (the API worker's `MAX_LIVE_RUNS_PER_ACCOUNT`). */
  maxLiveRunsPerAccount?: number;
  /** `--allow-outbound HOST:PORT`: what every project may fetch although it is this machine or private. */
  allowOutbound?: readonly string[];
}

export interface UpPlatform {
  /** `http://127.0.0.1:N`: the API (what `platform login --api` takes) and the console; no project is served there. */
  url: string;
  loginUrl: string;
  issuer: string;
  /** The fake email provider's outbox: what projects sent (the API has no outbox route, as deployed). */
  emailOutboxUrl: string;
  /** What the fakes' inspection routes (`/__fake/*`, the outbox among them) demand: kept in the state folder (operatorToken.ts). */
  operatorToken: string;
  /** Fires the platform workers' cron triggers due in `scheduledTime`'s minute (their wrangler configs' crons). */
  runScheduled(scheduledTime: Date): Promise<void>;
  stop(): Promise<void>;
}

const ACCOUNT_ID = "local-account";
const NAMESPACE = "local-dispatch";

/**
 * The platform alone, as deployed: gateway, API (the deployed worker, none
 * of `platform dev`'s routes), login worker with a local identity provider,
 * plugins and fakes in one workerd, behind one port (frontWorker.ts), and no
 * project. The API worker uploads pushed projects to the stand-in of
 * Cloudflare's script-upload API in this process, which starts each upload
 * before accepting it, as Cloudflare does; each accepted script then runs in
 * a workerd of its own (projectInstances.ts), so neither a push nor a project
 * that fails to start ever stops the platform or another project; its traces
 * come back to the trace intake here (tailForwarder.ts), into its log.
 * Miniflare listens on a loopback port of its own; the public port is a
 * proxy that drops every runtime-internal header first (publicEntry.ts), and
 * the fakes' inspection routes answer only the operator's token.
 */
export async function startUpPlatform(options: UpPlatformOptions): Promise<UpPlatform> {
  const { host, port, stateDir, log } = options;
  mkdirSync(stateDir, { recursive: true });
  const credentials = loadOrCreateCredentials(stateDir);
  const machineKey = loadOrCreateMachineKey();
  const deployedWorkers = await readDeployedWorkers(REPO_ROOT);
  const scripts = await buildPlatformWorkers(path.join(stateDir, "platform"), deployedWorkers, { devRoutes: false });
  const pluginWorkers = pluginWorkerNames(deployedWorkers);
  const ports = await assignLocalPorts({ host, pluginWorkers, fakes: LOCAL_PLUGIN_IDS });
  const pluginSecrets = loadOrCreatePluginSecrets(stateDir);
  const operatorToken = loadOrCreateOperatorToken(stateDir);
  const pluginUrls = localPluginUrls(host, ports);
  writePluginUrls(stateDir, pluginUrls);

  // The trace intake's tokens hold for this start only: every project's workerd starts again with the platform.
  const traceKey = randomBytes(32).toString("hex");
  const projects = createProjectInstances({
    stateDir,
    log,
    allowOutbound: options.allowOutbound ?? [],
    traces: { address: `${host}:${ports.traces}`, consumer: API_WORKER, key: traceKey },
    // What a project's service bindings name, by deployed name: the platform workers' own sockets.
    services: {
      [API_WORKER]: `${host}:${ports.api}`,
      ...Object.fromEntries(pluginWorkers.map((worker) => [worker, `${host}:${ports.plugins[worker]}`])),
    },
  });
  let replaying = true;
  const cloudflareToken = randomBytes(32).toString("hex");
  const standIn = createScriptUploadStandIn({
    apiToken: cloudflareToken,
    accountId: ACCOUNT_ID,
    namespace: NAMESPACE,
    startScript: startInWorkerd,
    // The push is answered once the new version serves (or was found not to start, and the old one serves on).
    onAccepted: async (script) => {
      saveAcceptedScript(stateDir, script, machineKey);
      if ((await projects.serve(script)) && !replaying) log(`Deployed ${script.name}`);
    },
  });
  const server = await serveStandIn(standIn, host);
  const idp = await startLocalLogin(host, port, ports.login);
  let mf: Miniflare | undefined;
  let entry: PublicEntry | undefined;
  let crons: LocalCron[] = [];
  const stopAll = async () => {
    await entry?.stop();
    await mf?.dispose();
    await Promise.all([projects.stop(), idp.provider.stop(), server.stop()]);
    await esbuild.stop();
  };

  try {
    const base = localPlatformConfig({
      host,
      port,
      ports,
      stateDir,
      deployed: deployedWorkers,
      scripts,
      adminToken: credentials.adminToken,
      secretsKey: credentials.secretsKey,
      login: idp.login,
      pluginSecrets,
      project: null,
      build: null,
      uploads: {
        target: { apiBase: server.apiBase, apiToken: cloudflareToken, accountId: ACCOUNT_ID, namespace: NAMESPACE },
        front: (request) => projects.dispatch(request),
      },
      onRequest: options.onRequest,
      fakeOperatorToken: operatorToken,
      ...(options.maxLiveRunsPerAccount === undefined ? {} : { maxLiveRunsPerAccount: options.maxLiveRunsPerAccount }),
    });
    const intake = await traceIntakeWorker({
      outDir: path.join(stateDir, "platform"),
      api: deployedWorkers.find((worker) => worker.name === API_WORKER)!,
      socket: { host, port: ports.traces },
      key: traceKey,
    });
    crons = localCrons(base.workers as V4WorkerOptions[]);
    mf = new Miniflare(
      convertV4MiniflareOptions({
        ...base,
        // Miniflare's own entry on a free loopback port; the public port is publicEntry's, in front of it.
        port: 0,
        workers: [frontWorker(), ...(base.workers as V4WorkerOptions[]), intake],
      }),
    );
    const internal = await mf.ready;
    entry = await servePublicEntry({ host, port, upstream: { host, port: Number(internal.port) } });
    const ran = await applyD1Migrations(await mf.getD1Database("DB", API_WORKER), MIGRATIONS_DIR);
    if (ran.length) log(`Applied D1 migrations: ${ran.join(", ")}`);
    const skipped = await replaySavedScripts(
      stateDir,
      standIn,
      {
        apiBase: server.apiBase,
        accountId: ACCOUNT_ID,
        namespace: NAMESPACE,
        apiToken: cloudflareToken,
      },
      machineKey,
    );
    for (const { name, reason } of skipped)
      log(`Skipped the saved script ${name}: ${reason}. The platform and the other projects run; push ${name} again.`);
    replaying = false;
  } catch (error) {
    await stopAll();
    throw error;
  }
  return {
    url: `http://${host}:${port}`,
    loginUrl: idp.login.publicUrl,
    issuer: idp.login.issuer,
    emailOutboxUrl: `${pluginUrls.fakes.email}/__fake/outbox`,
    operatorToken,
    async runScheduled(scheduledTime) {
      for (const { worker, cron } of dueCrons(crons, scheduledTime))
        await (await mf!.getWorker(worker)).scheduled({ cron, scheduledTime });
    },
    stop: stopAll,
  };
}
