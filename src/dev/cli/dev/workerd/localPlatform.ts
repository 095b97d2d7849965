import type { V4MiniflareOptions, V4WorkerOptions } from "miniflare";
import * as esbuild from "esbuild";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { stripVTControlCharacters } from "node:util";
import { PlatformError } from "../../../../core/errors.ts";
import { projectScriptBindings, type ScriptBinding } from "../../../../workers/api/projectScriptBindings.ts";
import {
  convertV4MiniflareOptions,
  Log,
  LogLevel,
  Miniflare,
  MiniflareResponse,
} from "../../../cloudflare/miniflareModule.ts";
import { strandedRunsWarning } from "./strandedRunsWarning.ts";
import { checkBundleParses } from "../../build/bundleParseCheck.ts";
import { buildProject, type ProjectBuild } from "../../build/buildProject.ts";
import { mapBundleLocations } from "../../build/bundleStackMapper.ts";
import { portableSourceMap } from "../../build/portableSourceMap.ts";
import { fetchProjectMetadata } from "../../build/extractMetadata.ts";
import { ProjectLoadErrors } from "../../build/projectLoadErrors.ts";
import { MIGRATIONS_DIR, REPO_ROOT } from "../../repoPaths.ts";
import { COMPATIBILITY_DATE, COMPATIBILITY_FLAGS } from "../../../../contracts/workerCompatibility.ts";
import { buildPlatformWorkers, type PlatformScripts } from "./buildPlatformWorkers.ts";
import { applyD1Migrations } from "./d1Migrations.ts";
import { type DeployedWorker, pluginWorkerNames, readDeployedWorkers } from "./deployedWorkers.ts";
import {
  isIdleRecoveryLine,
  messageWithStackLines,
  parseMiniflareRequestLine,
  type RequestRecord,
} from "../output/devLogLines.ts";
import { loadOrCreateCredentials, readConsolePort, rememberConsolePort, saveCredentials } from "../state/devState.ts";
import { readDevVars } from "../project/devVars.ts";
import { dueCrons, type LocalCron, localCrons } from "../crons/localCrons.ts";
import { startLocalIdentityProvider, type LocalIdentityProvider } from "../providers/localIdentityProvider.ts";
import {
  deployPluginMetadata,
  fakeProviderWorkers,
  LOCAL_PLUGIN_IDS,
  LOCAL_PLUGINS,
  LOCAL_SENDER_DOMAIN,
  localPluginOverrides,
  localPluginUrls,
  loadOrCreatePluginSecrets,
  writePluginUrls,
  type LocalPluginSecrets,
  type LocalPluginUrls,
} from "../providers/localPlugins.ts";
import { assignLocalPorts, type LocalPorts } from "./localPorts.ts";
import { localScriptBindings } from "./localScriptBindings.ts";
import { type LocalDispatcher, type LocalOverride, localWorker } from "./localWorker.ts";
import { problemWorkerScript } from "./problemWorker.ts";
import { projectSlugFor } from "../project/projectSlugFor.ts";
import { waitForProject } from "../project/waitForProject.ts";

export const LOCAL_DOMAIN = "localhost";
const DEV_USER_EMAIL = "dev@platform.local";

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
  /**
   * `--public`: the plugins apply the deployed public project's proxy rate. Otherwise a local project is a
   * private deployment for it (plugins/kit/rateLimit.ts), as the spec exempts private deployments.
   */
  publicLimits?: boolean;
  /** Called once per request the gateway answered (Miniflare's own request log, parsed). */
  onRequest?: (request: RequestRecord) => void;
  /** `--platform-frames`: print the platform's own frames of logged stacks, not one `… N platform frames` line. */
  platformFrames?: boolean;
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
  /** The build being served; null while the project has never built and loaded (see `problem`). */
  build: ProjectBuild | null;
  /**
   * Why the project is not running, while its first build or load has failed: the project's
   * address then serves a page saying so, and the console and API run as usual. Null once it runs.
   */
  problem: string | null;
  metadata: Record<string, unknown>;
  /** Where the project lives by the registry: `http://<slug>.localhost:N/`, or `http://localhost:N/<slug>/` when private. */
  projectUrl: string;
  /** With `login: "oidc"`: the login worker and identity provider URLs. */
  login: { url: string; issuer: string } | null;
  /** The plugin workers' and fake providers' own URLs. */
  plugins: LocalPluginUrls;
  /** Rebuilds the project and swaps it in, keeping all state. */
  rebuild(): Promise<ProjectBuild>;
  /** Fires each worker's cron triggers due in the minute of `scheduledTime`, as Cloudflare would when deployed. */
  runScheduled(scheduledTime?: Date): Promise<void>;
  miniflare: Miniflare;
  stop(): Promise<void>;
}

/** A worker only the local platform runs (the project, a fake provider), with the platform's compatibility settings. */
function workerBase(name: string, scriptPath: string): V4WorkerOptions {
  // modulesRoot: module names are relative to it, and workerd refuses paths that climb out with "..".
  return {
    name,
    modules: true,
    scriptPath,
    modulesRoot: path.dirname(scriptPath),
    compatibilityDate: COMPATIBILITY_DATE,
    compatibilityFlags: [...COMPATIBILITY_FLAGS],
  };
}

/** The deployed workers the local platform treats apart, by their deployed names. */
export const GATEWAY_WORKER = "platform-gateway";
export const API_WORKER = "platform-api";
export const LOGIN_WORKER = "platform-login";

/** `platform up`: where the API worker uploads pushed projects (the stand-in of Cloudflare's API in this process). */
export interface LocalUploadTarget {
  apiBase: string;
  apiToken: string;
  accountId: string;
  namespace: string;
}

export interface LocalPlatformInput {
  host: string;
  /** The entry port (the gateway's, or `platform up`'s front worker's). */
  port: number;
  ports: LocalPorts;
  stateDir: string;
  /** The platform's workers as deployed (`readDeployedWorkers`), and their local bundles. */
  deployed: DeployedWorker[];
  scripts: PlatformScripts;
  adminToken: string;
  /** The API worker's SECRETS_ENCRYPTION_KEY (project secrets at rest). */
  secretsKey: string;
  /** `--login oidc` and `platform up`: the login worker's wiring; without it the login worker does not run. */
  login: LocalLogin | null;
  pluginSecrets: LocalPluginSecrets;
  project: LocalProject | null;
  build: ProjectBuild | null;
  /** The project's own variables (`.dev.vars` under `platform dev`), bound beside the platform's. */
  projectVars?: Record<string, string>;
  /** Where the project is served: bound as `PLATFORM_PROJECT_URL` (the origin of its callback and stream URLs). */
  projectUrl?: string;
  /** With `project` and no `build`: what stops the project, served in its place (problemWorker.ts). */
  problem?: string | null;
  onRequest?: (request: RequestRecord) => void;
  /** Maps the project's log lines to its sources and remembers a top-level throw. */
  projectErrors?: ProjectLoadErrors;
  /**
   * `platform dev`: the frames of each stack workerd logs that are printed, the project's ("project": each run
   * of the platform's own is one `… N platform frames` line) or all; without it (`platform up`) as logged.
   */
  stackFrames?: "project" | "all";
  /** `platform dev` without `--public`: the plugins take local projects for private deployments (no proxy rate). */
  localProjectsPrivate?: boolean;
  /**
   * `platform up`: where the API worker uploads pushed projects, and the
   * service in front of the workerd each pushed project runs in
   * (src/dev/cli/up/projectInstances.ts). With them, the API worker is the
   * deployed one, without `platform dev`'s routes or their bindings.
   */
  uploads?: { target: LocalUploadTarget; front: NonNullable<LocalDispatcher["front"]> };
  /** `platform up --max-live-runs N`: the API worker's `MAX_LIVE_RUNS_PER_ACCOUNT`; without it, its wrangler.toml value. */
  maxLiveRunsPerAccount?: number;
  /** `platform up`: the token the fakes' inspection routes demand (src/dev/fakes/operatorGate.ts); none under `platform dev`. */
  fakeOperatorToken?: string;
}

/**
 * What each deployed worker gets locally instead of its deployed values,
 * by its deployed name: local addresses instead of the platform's domain
 * and public URLs, local secrets, sockets, and services to workers only the
 * local platform runs.
 */
function localOverrides(input: LocalPlatformInput): Record<string, LocalOverride> {
  const { host, ports, login } = input;
  const pluginUrls = localPluginUrls(host, ports);
  const projectsBaseUrl = `http://${LOCAL_DOMAIN}:${input.port}`;
  const upload = input.uploads?.target;
  return {
    [GATEWAY_WORKER]: {
      vars: { PLATFORM_DOMAIN: LOCAL_DOMAIN, DEFAULT_PROJECT: input.project?.slug },
    },
    [API_WORKER]: {
      vars: {
        ADMIN_TOKEN: input.adminToken,
        SECRETS_ENCRYPTION_KEY: input.secretsKey,
        PLATFORM_DOMAIN: LOCAL_DOMAIN,
        PROJECTS_BASE_URL: projectsBaseUrl,
        // Without a login worker (`platform dev` with the form login) there is no login URL to hand out.
        LOGIN_PUBLIC_URL: login?.publicUrl,
        CHATSERVER_PLUGIN_URL: pluginUrls.plugins.chatserver,
        WORKSPACE_PLUGIN_URL: pluginUrls.plugins.workspace,
        // `platform dev` uploads nothing (the project runs from its build): no upload token, so no upload.
        CLOUDFLARE_API_TOKEN: upload?.apiToken,
        ...(upload
          ? {
              CLOUDFLARE_API_BASE: upload.apiBase,
              CLOUDFLARE_ACCOUNT_ID: upload.accountId,
              DISPATCH_NAMESPACE: upload.namespace,
            }
          : {}),
        // The dev-only outbox route (`/projects/:slug/outbox`) shows the emails sent from this domain.
        EMAIL_SENDER_DOMAIN: upload ? undefined : LOCAL_SENDER_DOMAIN,
        ...(input.maxLiveRunsPerAccount === undefined
          ? {}
          : { MAX_LIVE_RUNS_PER_ACCOUNT: String(input.maxLiveRunsPerAccount) }),
      },
      // `platform dev`'s own routes reach the fake providers: bot test events and the local outbox.
      services: upload
        ? {}
        : {
            FAKE_CHATSERVER: LOCAL_PLUGINS.chatserver.fake,
            FAKE_WORKSPACE: LOCAL_PLUGINS.workspace.fake,
            FAKE_EMAIL: LOCAL_PLUGINS.email.fake,
          },
      socket: { host, port: ports.api },
    },
    ...(login
      ? {
          [LOGIN_WORKER]: {
            vars: {
              OIDC_ISSUER: login.issuer,
              OIDC_CLIENT_ID: login.clientId,
              OIDC_CLIENT_SECRET: login.clientSecret,
              LOGIN_FLOW_SECRET: login.flowSecret,
              LOGIN_PUBLIC_URL: login.publicUrl,
              PLATFORM_DOMAIN: LOCAL_DOMAIN,
              PROJECTS_BASE_URL: login.projectsBaseUrl,
            },
            socket: { host, port: ports.login },
          },
        }
      : {}),
    ...localPluginOverrides({
      host,
      ports,
      secrets: input.pluginSecrets,
      localProjectsPrivate: input.localProjectsPrivate === true && !input.uploads,
    }),
  };
}

/**
 * The Miniflare description of the whole local platform: every worker of
 * the deploy (`readDeployedWorkers`) as `localWorker` runs it, with
 * `localOverrides`; the gateway is the entry worker on `port`. Beside them:
 * the project (bound as `projectScriptBindings` binds a deployed project)
 * and the fake providers; the projects `platform up` took in run in their own
 * workerd each, behind `uploads.front`. The login worker runs only with `login`.
 */
export function localPlatformConfig(input: LocalPlatformInput): V4MiniflareOptions {
  const { project, build } = input;
  const dispatcher: LocalDispatcher = {
    scripts: project ? { [project.scriptName]: "SCRIPT_0" } : {},
    bindings: project ? { SCRIPT_0: project.scriptName } : {},
    front: input.uploads?.front,
  };

  const overrides = localOverrides(input);
  const running = input.deployed
    .filter((worker) => worker.name !== LOGIN_WORKER || input.login)
    // The gateway first: Miniflare's entry worker.
    .sort((a, b) => Number(b.name === GATEWAY_WORKER) - Number(a.name === GATEWAY_WORKER));
  const workers: V4WorkerOptions[] = running.map((worker) =>
    localWorker(worker, input.scripts.workers[worker.name]!, dispatcher, overrides[worker.name]),
  );
  if (project && build) {
    const bound = localScriptBindings([
      ...projectScriptBindings(
        {
          id: project.id,
          slug: project.slug,
          script_name: project.scriptName,
          worker_secret: project.workerSecret,
          ...(input.projectUrl ? { url: input.projectUrl } : {}),
        },
        build.durableObjects,
        input.login?.publicUrl,
      ),
      ...projectVarBindings(input.projectVars ?? {}),
    ]);
    workers.push({
      ...workerBase(project.scriptName, build.bundlePath),
      ...bound,
      // Its traces go to the API worker's tail handler, into the project's log (`platform logs`), as
      // a deployed project's upload names it (tail_consumers); workerd leaves the trace's scriptName empty.
      tails: [{ name: API_WORKER, props: { scriptName: project.scriptName } }],
      serviceBindings: {
        ...bound.serviceBindings,
        // Dev only (never in a deployment's bindings): maps a posted stack for the 500 page (src/runtime/entry/devErrorResponse.ts).
        PLATFORM_DEV_STACK: async (request) => new MiniflareResponse(mapBundleLocations(await request.text(), build)),
      },
    });
  } else if (project && input.problem) {
    workers.push({
      name: project.scriptName,
      modules: true,
      script: problemWorkerScript(input.problem),
      compatibilityDate: COMPATIBILITY_DATE,
    });
  }
  workers.push(
    ...fakeProviderWorkers({
      host: input.host,
      ports: input.ports,
      secrets: input.pluginSecrets,
      base: workerBase,
      paths: input.scripts.fakes,
      operatorToken: input.fakeOperatorToken,
    }),
  );
  return {
    host: input.host,
    port: input.port,
    resourcePersistencePath: path.join(input.stateDir, "state"),
    log: new DevLog(input.onRequest),
    // The recovery cron runs every minute; say so only when it repaired something.
    handleStructuredLogs: ({ level, message }) => {
      if (isIdleRecoveryLine(message)) return;
      const mapped = input.projectErrors?.present(message) ?? message;
      const text = input.stackFrames ? messageWithStackLines(mapped, input.stackFrames === "all") : mapped;
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
  // The local API's dev-only route (src/dev/routes/localProjectRoute.ts) creates the project on first use,
  // private or not, and hands over the worker secret to bind into the project worker.
  const linked = await apiCall(apiUrl, cliToken, "PUT", `/projects/${slug}/local`, { private: isPrivate });
  if (linked.status !== 200) {
    const refusal = (linked.json.error as { message?: string } | undefined)?.message ?? JSON.stringify(linked.json);
    // 409: the folder's project was created the other way; a project's privacy never changes.
    const instead =
      linked.status === 409
        ? ` Run it ${isPrivate ? "without" : "with"} --private, or delete ${stateDir} to start this folder's local platform over (its runs and data go with it).`
        : "";
    throw new Error(`Could not prepare local project "${slug}": ${refusal}${instead}`);
  }
  const { id, scriptName, workerSecret } = linked.json.project as LocalProject;
  return { cliToken, project: { id, slug, scriptName, workerSecret } };
}

export async function startLocalPlatform(options: LocalPlatformOptions): Promise<LocalPlatform> {
  const host = options.host ?? "127.0.0.1";
  const log = options.log ?? ((line: string) => console.log(line));
  mkdirSync(options.stateDir, { recursive: true });
  const slug = projectSlugFor(options.projectDir);
  const credentials = loadOrCreateCredentials(options.stateDir);

  const buildDir = path.join(options.stateDir, "build");
  /** The build workerd runs or is about to run: whose source map the project's log lines are read with. */
  let current: ProjectBuild | null = null;
  const projectErrors = new ProjectLoadErrors(() => current);
  /** The first build; when it fails, the project's address says why until a save fixes it. */
  let first: { build: ProjectBuild; vars: Record<string, string> } | null = null;
  let problem: string | null = null;
  try {
    first = await buildServed(options.projectDir, buildDir);
  } catch (error) {
    problem = problemText(error);
  }
  const deployed = await readDeployedWorkers(REPO_ROOT);
  const scripts = await buildPlatformWorkers(path.join(options.stateDir, "platform"), deployed, { devRoutes: true });
  // The API worker serves the console: keep its address across restarts while the port is free.
  const ports = await assignLocalPorts({
    host,
    pluginWorkers: pluginWorkerNames(deployed),
    fakes: LOCAL_PLUGIN_IDS,
    keepApi: readConsolePort(options.stateDir) ?? undefined,
  });
  rememberConsolePort(options.stateDir, ports.api);
  const idp = options.login === "oidc" ? await startLocalLogin(host, options.port, ports.login) : null;
  const login = idp?.login ?? null;
  const pluginUrls = localPluginUrls(host, ports);
  writePluginUrls(options.stateDir, pluginUrls);
  const pluginWorkerUrls = Object.fromEntries(
    Object.entries(ports.plugins).map(([worker, port]) => [worker, `http://${host}:${port}`]),
  );
  const base = {
    host,
    port: options.port,
    ports,
    stateDir: options.stateDir,
    deployed,
    scripts,
    adminToken: credentials.adminToken,
    secretsKey: credentials.secretsKey,
    login,
    pluginSecrets: loadOrCreatePluginSecrets(options.stateDir),
    onRequest: options.onRequest,
    projectErrors,
    stackFrames: options.platformFrames ? ("all" as const) : ("project" as const),
    localProjectsPrivate: options.publicLimits !== true,
  };
  let crons: LocalCron[] = [];
  const localProjectUrl = (slug: string) =>
    options.private
      ? `http://${LOCAL_DOMAIN}:${options.port}/${slug}/`
      : `http://${slug}.${LOCAL_DOMAIN}:${options.port}/`;
  // The origin its stream and callback URLs name: the address `Ready on` prints, which serves the project
  // (a `<slug>.localhost` name resolves in a browser but not in Node's fetch or a webhook sender's client).
  const boundProjectUrl = (slug: string) =>
    options.private ? localProjectUrl(slug) : `http://${host}:${options.port}`;
  const configure = (
    project: LocalProject | null,
    next: ProjectBuild | null,
    projectVars: Record<string, string> = {},
    shownProblem: string | null = null,
  ) => {
    const config = localPlatformConfig({
      ...base,
      project,
      build: next,
      projectVars,
      problem: shownProblem,
      ...(project ? { projectUrl: boundProjectUrl(project.slug) } : {}),
    });
    crons = localCrons(config.workers as V4WorkerOptions[]);
    return convertV4MiniflareOptions(config);
  };

  let mf: Miniflare;
  try {
    mf = new Miniflare(configure(null, null));
  } catch (error) {
    await idp?.provider.stop();
    throw error;
  }
  try {
    await mf.ready;
    const db = await mf.getD1Database("DB", API_WORKER);
    const ran = await applyD1Migrations(db, MIGRATIONS_DIR);
    if (ran.length) log(`Applied D1 migrations: ${ran.join(", ")}`);
    const apiUrl = `http://${host}:${ports.api}`;
    const { cliToken, project } = await ensureDevAccount(apiUrl, options.stateDir, slug, options.private === true);

    /** The version being served (its files, which the next build overwrites), to go back to when a build fails to load. */
    let served: ServedVersion | null = null;
    /** Back to the served version (or the problem page), after `failure` to load another. */
    const restore = async (failure: unknown) => {
      if (served) served.rewrite();
      else problem = problemText(failure);
      current = served?.build ?? null;
      await mf.setOptions(configure(project, current, served?.vars, problem));
    };
    const apply = async (next: { build: ProjectBuild; vars: Record<string, string> }) => {
      current = next.build;
      try {
        await mf.setOptions(configure(project, next.build, next.vars));
      } catch (error) {
        const failure = projectErrors.loadFailure(error);
        await restore(failure);
        throw failure;
      }
      served = new ServedVersion(next.build, next.vars);
      problem = null;
      // The project's log and runs name its sources with this build's map, as a push's.
      const mapped = await apiCall(apiUrl, cliToken, "PUT", `/projects/${project.slug}/source-map`, {
        map: portableSourceMap(next.build),
      });
      if (mapped.status !== 200)
        log(`The platform did not take the build's source map: ${JSON.stringify(mapped.json)}`);
      const worker = await mf.getWorker(project.scriptName);
      const metadata = await fetchProjectMetadata(
        (u, init) => worker.fetch(u, init) as never,
        project.id,
        project.workerSecret,
      );
      const registered = await apiCall(apiUrl, cliToken, "PUT", `/projects/${project.slug}/metadata`, metadata);
      if (registered.status !== 200)
        throw new Error(`Could not register the project's metadata: ${JSON.stringify(registered.json)}`);
      for (const trouble of await deployPluginMetadata(pluginWorkerUrls, project, metadata)) log(`Plugins: ${trouble}`);
      return metadata;
    };
    let metadata: Record<string, unknown> = {};
    if (first)
      metadata = await apply(first).catch((error: unknown) => {
        // Failing to load puts the problem page up (restore); anything else is a failure to start.
        if (problem === null) throw error;
        return {};
      });
    else await mf.setOptions(configure(project, null, {}, problem));
    const url = `http://${host}:${options.port}`;
    // The problem page answers 503 on purpose: then any answer will do.
    await waitForProject(url + "/", { acceptServerError: problem !== null });
    const stopRedeploy = redeployOnNewInstalls(apiUrl, cliToken, project, () => metadata, pluginWorkerUrls, log);

    return {
      url,
      apiUrl,
      project,
      cliToken,
      projectUrl: localProjectUrl(project.slug),
      login: login && { url: login.publicUrl, issuer: login.issuer },
      plugins: pluginUrls,
      get build() {
        return served?.build ?? null;
      },
      get problem() {
        return problem;
      },
      get metadata() {
        return metadata;
      },
      miniflare: mf,
      async rebuild() {
        let next: { build: ProjectBuild; vars: Record<string, string> };
        try {
          next = await buildServed(options.projectDir, buildDir);
        } catch (error) {
          // A bundle refused after it was written (it does not parse) must not leave its map to the served version's lines.
          served?.rewrite();
          // Nothing was ever served: the page says what is wrong now.
          if (!served) {
            problem = problemText(error);
            await mf.setOptions(configure(project, null, {}, problem));
          }
          throw error;
        }
        metadata = await apply(next);
        const worker = await mf.getWorker(project.scriptName);
        const warning = await strandedRunsWarning(
          (u, init) => worker.fetch(u, init as never) as never,
          project,
          metadata,
        ).catch((error: unknown) => [`Could not check the live workflow runs against this code: ${String(error)}`]);
        for (const line of warning) log(line);
        return next.build;
      },
      async runScheduled(scheduledTime = new Date()) {
        for (const { worker, cron } of dueCrons(crons, scheduledTime))
          await (await mf.getWorker(worker)).scheduled({ cron, scheduledTime });
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
  pluginUrls: Record<string, string>,
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

/** A build as `platform dev` serves it: the bundle and the project's `.dev.vars`, read together. */
async function buildServed(
  projectDir: string,
  buildDir: string,
): Promise<{ build: ProjectBuild; vars: Record<string, string> }> {
  const build = await buildProject(projectDir, buildDir, { sourceMap: true });
  checkBundleParses(build);
  return { build, vars: readDevVars(projectDir) };
}

/** What the problem page and the terminal say about a failed build or load: our own messages whole. */
function problemText(error: unknown): string {
  if (error instanceof PlatformError) return error.message;
  return (error instanceof Error ? error.message : String(error)).split("\n")[0]!;
}

/**
 * The version workerd serves, with its bundle and source map as they were:
 * every dev build writes to the same files, so a build that fails to load
 * has replaced them; going back puts them back (the map names this
 * version's lines in the log again).
 */
class ServedVersion {
  readonly build: ProjectBuild;
  readonly vars: Record<string, string>;
  readonly #bundle: Buffer;
  readonly #map: Buffer | null;
  constructor(build: ProjectBuild, vars: Record<string, string>) {
    this.build = build;
    this.vars = vars;
    this.#bundle = readFileSync(build.bundlePath);
    this.#map = existsSync(`${build.bundlePath}.map`) ? readFileSync(`${build.bundlePath}.map`) : null;
  }
  rewrite(): void {
    writeFileSync(this.build.bundlePath, this.#bundle);
    if (this.#map) writeFileSync(`${this.build.bundlePath}.map`, this.#map);
  }
}

/** A project's own variables as upload bindings: secret_text, as `platform secret put` binds them when deployed. */
function projectVarBindings(vars: Record<string, string>): ScriptBinding[] {
  return Object.entries(vars).map(([name, text]) => ({ type: "secret_text", name, text }));
}
