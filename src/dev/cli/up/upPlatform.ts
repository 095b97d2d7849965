import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import path from "node:path";
import * as esbuild from "esbuild";
import { convertV4MiniflareOptions, Miniflare, type V4WorkerOptions } from "miniflare";
import { type AcceptedScript, createScriptUploadStandIn } from "../../cloudflare/scriptUploadStandIn.ts";
import { buildPlatformWorkers } from "../dev/buildPlatformWorkers.ts";
import { applyD1Migrations } from "../dev/d1Migrations.ts";
import { pluginWorkerNames, readDeployedWorkers } from "../dev/deployedWorkers.ts";
import type { RequestRecord } from "../dev/devLogLines.ts";
import { loadOrCreateCredentials } from "../dev/devState.ts";
import { API_WORKER, localPlatformConfig, startLocalLogin } from "../dev/localPlatform.ts";
import { LOCAL_PLUGIN_IDS, loadOrCreatePluginSecrets, localPluginUrls, writePluginUrls } from "../dev/localPlugins.ts";
import { assignLocalPorts } from "../dev/localPorts.ts";
import { MIGRATIONS_DIR, REPO_ROOT } from "../repoPaths.ts";
import { frontWorker } from "./frontWorker.ts";
import { replaySavedScripts, saveAcceptedScript, scriptsDir } from "./savedScripts.ts";
import { scriptWorker } from "./scriptWorker.ts";
import { serveStandIn } from "./standInServer.ts";

export interface UpPlatformOptions {
  stateDir: string;
  port: number;
  host: string;
  log: (line: string) => void;
  onRequest?: (request: RequestRecord) => void;
}

export interface UpPlatform {
  /** `http://127.0.0.1:N`: the API (what `platform login --api` takes) and private projects' `/<slug>/`. */
  url: string;
  loginUrl: string;
  issuer: string;
  stop(): Promise<void>;
}

const ACCOUNT_ID = "local-account";
const NAMESPACE = "local-dispatch";
const DEPLOYMENT = /^\/projects\/[^/]+\/deployment$/;
/** Miniflare logs a request when its answer starts; let the body reach the CLI before workerd restarts. */
const AFTER_DEPLOY_MS = 250;
/** A deploy that was not made through port N (no request line): take its script in anyway. */
const FALLBACK_MS = 5_000;

/**
 * The platform alone, as deployed: gateway, API, login worker with a local
 * identity provider, plugins and fakes in one Miniflare, behind one port
 * (frontWorker.ts), and no project. The API worker uploads pushed projects to
 * the stand-in of Cloudflare's script-upload API in this process; each script
 * it accepts joins the Miniflare as the dispatch namespace would serve it.
 * Taking one in restarts workerd, so that waits until the deployment request
 * that uploaded it has answered.
 */
export async function startUpPlatform(options: UpPlatformOptions): Promise<UpPlatform> {
  const { host, port, stateDir, log } = options;
  mkdirSync(stateDir, { recursive: true });
  const credentials = loadOrCreateCredentials(stateDir);
  const deployedWorkers = await readDeployedWorkers(REPO_ROOT);
  const scripts = await buildPlatformWorkers(path.join(stateDir, "platform"), deployedWorkers);
  const ports = await assignLocalPorts({
    host,
    pluginWorkers: pluginWorkerNames(deployedWorkers),
    fakes: LOCAL_PLUGIN_IDS,
  });
  const pluginSecrets = loadOrCreatePluginSecrets(stateDir);
  writePluginUrls(stateDir, localPluginUrls(host, ports));

  const deployed = new Map<string, { scriptName: string; worker: V4WorkerOptions }>();
  const pending = new Map<string, AcceptedScript>();
  const cloudflareToken = randomBytes(32).toString("hex");
  const standIn = createScriptUploadStandIn({
    apiToken: cloudflareToken,
    accountId: ACCOUNT_ID,
    namespace: NAMESPACE,
    onAccepted: (script) => {
      saveAcceptedScript(stateDir, script);
      pending.set(script.name, script);
      scheduleApply(FALLBACK_MS);
    },
  });
  const server = await serveStandIn(standIn, host);
  const idp = await startLocalLogin(host, port, ports.login);
  const stopAll = async (mf?: Miniflare) => {
    await Promise.all([mf?.dispose(), idp.provider.stop(), server.stop()]);
    await esbuild.stop();
  };

  const config = () => {
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
      uploaded: [...deployed.values()],
      uploadTarget: {
        apiBase: server.apiBase,
        apiToken: cloudflareToken,
        accountId: ACCOUNT_ID,
        namespace: NAMESPACE,
      },
      onRequest: (request) => {
        options.onRequest?.(request);
        if (request.method === "PUT" && DEPLOYMENT.test(request.path.split("?")[0]!)) scheduleApply(AFTER_DEPLOY_MS);
      },
    });
    return convertV4MiniflareOptions({ ...base, workers: [frontWorker(), ...(base.workers as V4WorkerOptions[])] });
  };

  let mf: Miniflare | undefined;
  let timer: NodeJS.Timeout | undefined;
  let applying: Promise<void> = Promise.resolve();
  function scheduleApply(delay: number) {
    clearTimeout(timer);
    timer = setTimeout(() => {
      applying = applying.then(async () => {
        if (!pending.size || !mf) return;
        for (const script of pending.values()) {
          deployed.set(script.name, {
            scriptName: script.name,
            worker: scriptWorker(script, path.join(scriptsDir(stateDir), script.name, "modules")),
          });
          log(`Deployed ${script.name}`);
        }
        pending.clear();
        await mf
          .setOptions(config())
          .catch((error: unknown) => log(`Could not serve the new scripts: ${String(error)}`));
      });
    }, delay);
  }

  try {
    for (const refusal of await replaySavedScripts(stateDir, standIn, {
      apiBase: server.apiBase,
      accountId: ACCOUNT_ID,
      namespace: NAMESPACE,
      apiToken: cloudflareToken,
    }))
      log(`Not serving a kept script the stand-in refuses now: ${refusal}`);
    for (const script of pending.values())
      deployed.set(script.name, {
        scriptName: script.name,
        worker: scriptWorker(script, path.join(scriptsDir(stateDir), script.name, "modules")),
      });
    pending.clear();
    clearTimeout(timer);
    mf = new Miniflare(config());
    await mf.ready;
    const ran = await applyD1Migrations(await mf.getD1Database("DB", API_WORKER), MIGRATIONS_DIR);
    if (ran.length) log(`Applied D1 migrations: ${ran.join(", ")}`);
  } catch (error) {
    await stopAll(mf);
    throw error;
  }
  return {
    url: `http://${host}:${port}`,
    loginUrl: idp.login.publicUrl,
    issuer: idp.login.issuer,
    async stop() {
      clearTimeout(timer);
      await applying;
      await stopAll(mf);
    },
  };
}
