import {
  convertV4MiniflareOptions,
  Log,
  LogLevel,
  Miniflare,
  Response as MiniflareResponse,
  type V4MiniflareOptions,
  type V4WorkerOptions,
} from "miniflare";
import * as esbuild from "esbuild";
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { stripVTControlCharacters } from "node:util";
import { buildProject, type ProjectBuild } from "../build/buildProject.ts";
import { mapBundleLocations } from "../build/bundleStackMapper.ts";
import { fetchProjectMetadata } from "../build/extractMetadata.ts";
import { ProjectLoadErrors } from "../build/projectLoadErrors.ts";
import { COMPATIBILITY_DATE, COMPATIBILITY_FLAGS, CONSOLE_ASSETS_DIR, MIGRATIONS_DIR } from "../repoPaths.ts";
import { buildPlatformWorkers, type PlatformWorkerName } from "./buildPlatformWorkers.ts";
import { applyD1Migrations } from "./d1Migrations.ts";
import { isIdleRecoveryLine, parseMiniflareRequestLine, type RequestRecord } from "./devLogLines.ts";
import { loadOrCreateCredentials, readConsolePort, rememberConsolePort, saveCredentials } from "./devState.ts";
import { startLocalIdentityProvider, type LocalIdentityProvider } from "./localIdentityProvider.ts";
import {
  deployPluginMetadata,
  assignLocalPluginPorts,
  FAKE_WORKER_NAMES,
  LOCAL_SENDER_DOMAIN,
  localPluginUrls,
  localPluginWorkers,
  loadOrCreatePluginSecrets,
  writePluginUrls,
  type LocalPluginPorts,
  type LocalPluginSecrets,
  type LocalPluginUrls,
} from "./localPlugins.ts";
import { isPortFree } from "./portOwner.ts";
import { projectSlugFor } from "./projectSlugFor.ts";
import { waitForProject } from "./waitForProject.ts";

export const LOCAL_DOMAIN = "localhost";
const DEV_USER_EMAIL = "dev@platform.local";
const D1_ID = "platform-db";
const WORKFLOW_QUEUE = "workflow-execute";

export interface LocalProject {
  id: number;
  slug: string;
  scriptName: string;
  workerSecret: string;
}

export interface LocalPlatformOptions {
  projectDir: string;
  stateDir: string;
  port: number;
  host?: string;
  /** Where worker logs and platform messages go. */
  log?: (line: string) => void;
  /** "form" (default): the runtime's dummy login form. "oidc": the login worker and a local identity provider. */
  login?: "form" | "oidc";
  /** Run the project as a private deployment, served at http://localhost:<port>/<slug>/. */
  private?: boolean;
  /** Called once per request the gateway answered (Miniflare's own request log, parsed). */
  onRequest?: (request: RequestRecord) => void;
}

/** The login worker's local wiring (`--login oidc`). */
export interface LocalLogin {
  /** The login worker's own socket. */
  port: number;
  /** `http://127.0.0.1:<port>`: LOGIN_PUBLIC_URL, and the project's PLATFORM_LOGIN_URL. */
  publicUrl: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  flowSecret: string;
  /** Where the login worker sends browsers back: `http://localhost:<project port>`. */
  projectsBaseUrl: string;
}

export interface LocalPlatform {
  url: string;
  apiUrl: string;
  project: LocalProject;
  cliToken: string;
  build: ProjectBuild;
  metadata: Record<string, unknown>;
  /** Where the project lives by the registry: `http://<slug>.localhost:N/`, or `http://localhost:N/<slug>/` when private. */
  projectUrl: string;
  /** With `login: "oidc"`: the login worker and identity provider URLs. */
  login: { url: string; issuer: string } | null;
  /** The plugin workers' and fake providers' own URLs. */
  plugins: LocalPluginUrls;
  /** Rebuilds the project and swaps it in, keeping all state. */
  rebuild(): Promise<ProjectBuild>;
  /** What the every-minute cron trigger does when deployed. */
  runScheduled(scheduledTime?: Date): Promise<void>;
  miniflare: Miniflare;
  stop(): Promise<void>;
}

function workerBase(name: string, scriptPath: string): V4WorkerOptions {
  // modulesRoot: module names are relative to it, and workerd refuses paths that climb out with "..".
  return {
    name,
    modules: true,
    scriptPath,
    modulesRoot: path.dirname(scriptPath),
    compatibilityDate: COMPATIBILITY_DATE,
    compatibilityFlags: COMPATIBILITY_FLAGS,
  };
}

/**
 * The Miniflare description of the whole local platform: the gateway is the
 * entry worker on `port`; the API worker gets its own socket; every platform
 * worker reaches project workers through `LOCAL_SCRIPTS` service bindings
 * (local stand-in for the dispatch namespace).
 */
export function localPlatformConfig(input: {
  host: string;
  port: number;
  apiPort: number;
  stateDir: string;
  platformScripts: Record<PlatformWorkerName, string>;
  adminToken: string;
  login?: LocalLogin | null;
  project: LocalProject | null;
  build: ProjectBuild | null;
  /** The plugin workers and fake providers, each on its own port. */
  plugins?: { ports: LocalPluginPorts; secrets: LocalPluginSecrets } | null;
  onRequest?: (request: RequestRecord) => void;
  /** Maps the project's log lines to its sources and remembers a top-level throw. */
  projectErrors?: ProjectLoadErrors;
  /** `platform up`: the project workers uploaded through the API (src/dev/cli/up/), served beside `project`. */
  deployed?: { scriptName: string; worker: V4WorkerOptions }[];
  /** `platform up`: more bindings of the API worker (its upload target, the login worker's URL). */
  apiBindings?: Record<string, string>;
}): V4MiniflareOptions {
  const { project, build } = input;
  const scripts: Record<string, string> = project ? { [project.scriptName]: "SCRIPT_0" } : {};
  const scriptBindings: Record<string, string> = project ? { SCRIPT_0: project.scriptName } : {};
  (input.deployed ?? []).forEach(({ scriptName }, i) => {
    scripts[scriptName] = `DEPLOYED_${i}`;
    scriptBindings[`DEPLOYED_${i}`] = scriptName;
  });
  const pluginUrls = input.plugins ? localPluginUrls(input.host, input.plugins.ports) : null;
  const workers: V4WorkerOptions[] = [
    {
      ...workerBase("gateway", input.platformScripts.gateway),
      d1Databases: { DB: D1_ID },
      bindings: {
        PLATFORM_DOMAIN: LOCAL_DOMAIN,
        LOCAL_SCRIPTS: JSON.stringify(scripts),
        ...(project ? { DEFAULT_PROJECT: project.slug } : {}),
      },
      serviceBindings: scriptBindings,
    },
    {
      ...workerBase("api", input.platformScripts.api),
      d1Databases: { DB: D1_ID },
      queueProducers: { WORKFLOW_QUEUE: { queueName: WORKFLOW_QUEUE } },
      queueConsumers: { [WORKFLOW_QUEUE]: { maxBatchTimeout: 0.05, maxRetries: 10 } },
      // The API worker exports the plugins' actor classes (SessionCode also backs its `POST /oauth/session`).
      durableObjects: input.plugins
        ? {
            SESSION_CODES: { className: "SessionCode", useSQLite: true },
            RATE_LIMITER: { className: "RateLimiter", useSQLite: true },
          }
        : {},
      bindings: {
        ADMIN_TOKEN: input.adminToken,
        ...input.apiBindings,
        LOCAL_SCRIPTS: JSON.stringify(scripts),
        ...(pluginUrls
          ? {
              CHATSERVER_PLUGIN_URL: pluginUrls.plugins.chatserver,
              WORKSPACE_PLUGIN_URL: pluginUrls.plugins.workspace,
              EMAIL_SENDER_DOMAIN: LOCAL_SENDER_DOMAIN,
            }
          : {}),
      },
      serviceBindings: {
        ...scriptBindings,
        // As deployed: the deployment route hands each pushed project's handlers to the plugins' `/deploy`.
        ...(input.plugins
          ? {
              CHATSERVER_PLUGIN: "plugin-chatserver",
              WORKSPACE_PLUGIN: "plugin-workspace",
              EMAIL_PLUGIN: "plugin-email-send",
            }
          : {}),
        // Local only: the fake providers, so the API can fire bot test events (`/projects/:slug/plugins/:plugin/test-events`).
        ...(input.plugins
          ? {
              FAKE_CHATSERVER: FAKE_WORKER_NAMES.chatserver,
              FAKE_WORKSPACE: FAKE_WORKER_NAMES.workspace,
              // and the local outbox (`/projects/:slug/outbox`).
              FAKE_EMAIL: FAKE_WORKER_NAMES.email,
            }
          : {}),
      },
      // The console's static files, served before the worker as Workers Static Assets would be (wrangler.toml [assets]).
      assets: { directory: CONSOLE_ASSETS_DIR, routerConfig: { has_user_worker: true } },
      unsafeDirectSockets: [{ host: input.host, port: input.apiPort }],
    },
  ];
  if (project && build) {
    workers.push({
      ...workerBase(project.scriptName, build.bundlePath),
      bindings: {
        PLATFORM_WORKER_SECRET: project.workerSecret,
        PLATFORM_PROJECT_ID: String(project.id),
        PLATFORM_PROJECT_SLUG: project.slug,
        PLATFORM_LOCAL: "1",
        ...(input.login ? { PLATFORM_LOGIN_URL: input.login.publicUrl } : {}),
      },
      serviceBindings: {
        PLATFORM_API: "api",
        // Dev only (never in a deployment's bindings): maps a posted stack for the 500 page (src/runtime/entry/devErrorResponse.ts).
        PLATFORM_DEV_STACK: async (request) => new MiniflareResponse(mapBundleLocations(await request.text(), build)),
        ...(input.plugins
          ? {
              CHATSERVER_PLUGIN: "plugin-chatserver",
              WORKSPACE_PLUGIN: "plugin-workspace",
              EMAIL_PLUGIN: "plugin-email-send",
            }
          : {}),
      },
      durableObjects: Object.fromEntries(
        build.durableObjects.map((className) => [
          className === "WorkflowRun" ? "WORKFLOW_RUNS" : "WORKFLOW_RUN_INDEX",
          { className, useSQLite: true },
        ]),
      ),
    });
  }
  workers.push(...(input.deployed ?? []).map(({ worker }) => worker));
  if (input.plugins) {
    workers.push(
      ...localPluginWorkers({
        host: input.host,
        ports: input.plugins.ports,
        secrets: input.plugins.secrets,
        scripts,
        scriptBindings,
        base: workerBase,
        paths: input.platformScripts,
        d1Id: D1_ID,
      }),
    );
  }
  if (input.login) {
    workers.push({
      ...workerBase("login", input.platformScripts.login),
      d1Databases: { DB: D1_ID },
      bindings: {
        OIDC_ISSUER: input.login.issuer,
        OIDC_CLIENT_ID: input.login.clientId,
        OIDC_CLIENT_SECRET: input.login.clientSecret,
        LOGIN_FLOW_SECRET: input.login.flowSecret,
        LOGIN_PUBLIC_URL: input.login.publicUrl,
        PLATFORM_DOMAIN: LOCAL_DOMAIN,
        PROJECTS_BASE_URL: input.login.projectsBaseUrl,
      },
      unsafeDirectSockets: [{ host: input.host, port: input.login.port }],
    });
  }
  return {
    host: input.host,
    port: input.port,
    resourcePersistencePath: path.join(input.stateDir, "state"),
    log: new DevLog(input.onRequest),
    // The recovery cron runs every minute; say so only when it repaired something.
    handleStructuredLogs: ({ level, message }) => {
      if (isIdleRecoveryLine(message)) return;
      const text = input.projectErrors?.present(message) ?? message;
      if (level === "error" || level === "warn") console.error(text);
      else console.log(text);
    },
    // No internet here: never fetch the real Request.cf object.
    cf: false,
    workers,
  };
}

/**
 * Miniflare's log, at INFO so that its entry worker reports each request the
 * gateway answers (`GET / 200 OK (3ms)`), handed to `onRequest` instead of
 * printed; its other INFO lines (its own "Ready on") are dropped, warnings
 * and errors printed as before.
 */
class DevLog extends Log {
  readonly #onRequest?: (request: RequestRecord) => void;
  constructor(onRequest?: (request: RequestRecord) => void) {
    super(LogLevel.INFO);
    this.#onRequest = onRequest;
  }
  override logWithLevel(level: LogLevel, message: string): void {
    if (level === LogLevel.INFO) {
      const request = parseMiniflareRequestLine(stripVTControlCharacters(message));
      if (request) this.#onRequest?.(request);
      return;
    }
    if (level <= LogLevel.WARN) super.logWithLevel(level, message);
  }
}

async function apiCall(apiUrl: string, token: string, method: string, pathname: string, body?: unknown) {
  const response = await fetch(apiUrl + pathname, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  return { status: response.status, json };
}

/** The local CLI user and the project's record, created through the API the first time. */
async function ensureDevAccount(
  apiUrl: string,
  stateDir: string,
  slug: string,
  isPrivate: boolean,
): Promise<{ cliToken: string; project: LocalProject }> {
  const credentials = loadOrCreateCredentials(stateDir);
  let cliToken = credentials.cliToken;
  if (!cliToken || (await apiCall(apiUrl, cliToken, "GET", "/projects")).status === 401) {
    const issued = await apiCall(apiUrl, credentials.adminToken, "POST", "/admin/users", {
      email: DEV_USER_EMAIL,
      label: "platform dev",
    });
    if (issued.status !== 201) throw new Error(`Could not create the local CLI user: ${JSON.stringify(issued.json)}`);
    cliToken = issued.json.token as string;
    saveCredentials(stateDir, { ...credentials, cliToken });
  }
  // The local API's dev-only route (src/dev/routes/localProjectRoute.ts) creates the project on first use
  // (a folder named like a reserved slug still runs locally), applies `--private` (or its absence)
  // and hands over the worker secret to bind into the project worker.
  const linked = await apiCall(apiUrl, cliToken, "PUT", `/projects/${slug}/local`, { private: isPrivate });
  if (linked.status !== 200)
    throw new Error(`Could not prepare local project "${slug}": ${JSON.stringify(linked.json)}`);
  const { id, scriptName, workerSecret } = linked.json.project as LocalProject;
  return { cliToken, project: { id, slug, scriptName, workerSecret } };
}

export async function startLocalPlatform(options: LocalPlatformOptions): Promise<LocalPlatform> {
  const host = options.host ?? "127.0.0.1";
  const log = options.log ?? ((line: string) => console.log(line));
  mkdirSync(options.stateDir, { recursive: true });
  const slug = projectSlugFor(options.projectDir);
  const credentials = loadOrCreateCredentials(options.stateDir);

  let build = await buildProject(options.projectDir, path.join(options.stateDir, "build"), { sourceMap: true });
  const projectErrors = new ProjectLoadErrors(() => build);
  const platformScripts = await buildPlatformWorkers(path.join(options.stateDir, "platform"));
  // Held open together so no two of them are the same port.
  const ports = await freePorts(host, 8);
  // The API worker serves the console: keep its address across restarts while the port is free.
  const remembered = readConsolePort(options.stateDir);
  const apiPort =
    remembered && !ports.includes(remembered) && (await isPortFree(host, remembered)) ? remembered : ports[0]!;
  rememberConsolePort(options.stateDir, apiPort);
  const idp = options.login === "oidc" ? await startLocalLogin(host, options.port, ports[7]!) : null;
  const login = idp?.login ?? null;
  const pluginPorts = assignLocalPluginPorts(ports.slice(1, 7));
  const plugins = { ports: pluginPorts, secrets: loadOrCreatePluginSecrets(options.stateDir) };
  const pluginUrls = localPluginUrls(host, pluginPorts);
  writePluginUrls(options.stateDir, pluginUrls);
  const base = {
    host,
    port: options.port,
    apiPort,
    stateDir: options.stateDir,
    platformScripts,
    adminToken: credentials.adminToken,
    login,
    plugins,
    onRequest: options.onRequest,
    projectErrors,
  };

  let mf: Miniflare;
  try {
    mf = new Miniflare(convertV4MiniflareOptions(localPlatformConfig({ ...base, project: null, build: null })));
  } catch (error) {
    await idp?.provider.stop();
    throw error;
  }
  try {
    await mf.ready;
    const db = await mf.getD1Database("DB", "api");
    const ran = await applyD1Migrations(db, MIGRATIONS_DIR);
    if (ran.length) log(`Applied D1 migrations: ${ran.join(", ")}`);
    const apiUrl = `http://${host}:${apiPort}`;
    const { cliToken, project } = await ensureDevAccount(apiUrl, options.stateDir, slug, options.private === true);

    const apply = async (next: ProjectBuild) => {
      await mf
        .setOptions(convertV4MiniflareOptions(localPlatformConfig({ ...base, project, build: next })))
        .catch((error: unknown) => {
          throw projectErrors.loadFailure(error);
        });
      const worker = await mf.getWorker(project.scriptName);
      const metadata = await fetchProjectMetadata(
        (u, init) => worker.fetch(u, init) as never,
        project.id,
        project.workerSecret,
      );
      const registered = await apiCall(apiUrl, cliToken, "PUT", `/projects/${project.slug}/metadata`, metadata);
      if (registered.status !== 200)
        throw new Error(`Could not register the project's metadata: ${JSON.stringify(registered.json)}`);
      for (const problem of await deployPluginMetadata(pluginUrls, project, metadata)) log(`Plugins: ${problem}`);
      return metadata;
    };
    let metadata = await apply(build);
    const url = `http://${host}:${options.port}`;
    await waitForProject(url + "/");
    const stopRedeploy = redeployOnNewInstalls(apiUrl, cliToken, project, () => metadata, pluginUrls, log);

    return {
      url,
      apiUrl,
      project,
      cliToken,
      projectUrl: options.private
        ? `http://${LOCAL_DOMAIN}:${options.port}/${project.slug}/`
        : `http://${project.slug}.${LOCAL_DOMAIN}:${options.port}/`,
      login: login && { url: login.publicUrl, issuer: login.issuer },
      plugins: pluginUrls,
      get build() {
        return build;
      },
      get metadata() {
        return metadata;
      },
      miniflare: mf,
      async rebuild() {
        const next = await buildProject(options.projectDir, path.join(options.stateDir, "build"), { sourceMap: true });
        metadata = await apply(next);
        build = next;
        return next;
      },
      async runScheduled(scheduledTime = new Date()) {
        const api = await mf.getWorker("api");
        await api.scheduled({ cron: "* * * * *", scheduledTime });
      },
      async stop() {
        stopRedeploy();
        await Promise.all([mf.dispose(), idp?.provider.stop()]);
        // The esbuild service process would otherwise outlive us until its pipe closes.
        await esbuild.stop();
      },
    };
  } catch (error) {
    await Promise.all([mf.dispose(), idp?.provider.stop()]);
    throw error;
  }
}

/**
 * A plugin install claims a new server or workspace after the last build's
 * `/deploy`; deployed, the next push registers its commands, locally this
 * re-sends the metadata as soon as the project's claimed resources change.
 */
function redeployOnNewInstalls(
  apiUrl: string,
  cliToken: string,
  project: LocalProject,
  metadata: () => Record<string, unknown>,
  pluginUrls: LocalPluginUrls,
  log: (line: string) => void,
): () => void {
  let last: string | null = null;
  let running = false;
  const timer = setInterval(async () => {
    if (running) return;
    running = true;
    try {
      const answer = await apiCall(apiUrl, cliToken, "GET", `/projects/${project.slug}/plugins`);
      if (answer.status !== 200) return;
      const resources =
        (answer.json.resources as { plugin: string; externalId: string; claimedAt: string }[] | undefined) ?? [];
      const now = JSON.stringify(resources.map((r) => [r.plugin, r.externalId, r.claimedAt]));
      if (last !== null && now !== last) {
        for (const problem of await deployPluginMetadata(pluginUrls, project, metadata())) log(`Plugins: ${problem}`);
      }
      last = now;
    } catch {
      // the platform is stopping or busy: try again on the next tick
    } finally {
      running = false;
    }
  }, 1000);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * `--login oidc`: a local identity provider with one client, the login
 * worker's `/callback` on its own loopback port, and the secrets between
 * them, fresh for every start (sign-ins in progress do not survive a restart).
 */
export async function startLocalLogin(
  host: string,
  projectPort: number,
  port: number,
): Promise<{ provider: LocalIdentityProvider; login: LocalLogin }> {
  const publicUrl = `http://${host}:${port}`;
  const clientId = "platform-login";
  const clientSecret = randomBytes(32).toString("hex");
  const provider = await startLocalIdentityProvider({
    host,
    clientId,
    clientSecret,
    redirectUri: `${publicUrl}/callback`,
  });
  return {
    provider,
    login: {
      port,
      publicUrl,
      issuer: provider.issuer,
      clientId,
      clientSecret,
      flowSecret: randomBytes(32).toString("hex"),
      projectsBaseUrl: `http://${LOCAL_DOMAIN}:${projectPort}`,
    },
  };
}

/** `count` distinct ports the OS says are free right now (all held open until every one is chosen). */
export async function freePorts(host: string, count: number): Promise<number[]> {
  const net = await import("node:net");
  const servers = await Promise.all(
    Array.from({ length: count }, () => {
      const server = net.createServer();
      return new Promise<import("node:net").Server>((resolve, reject) => {
        server.once("error", reject);
        server.listen(0, host, () => resolve(server));
      });
    }),
  );
  const ports = servers.map((server) => (server.address() as { port: number }).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}
