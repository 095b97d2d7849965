import * as esbuild from "esbuild";
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { buildProject, type ProjectBuild } from "../../build/buildProject.ts";
import { nodeLoadFailure, projectRelativeStack } from "../../build/projectLoadErrors.ts";
import type { NodeWorkflowBackend, NodeWorkflowBackendOptions } from "../../../../runtime/node/nodeWorkflowBackend.ts";
import type { RequestRecord } from "../output/devLogLines.ts";
import { createNodeWorkflowApi, NODE_API_PATH } from "./nodeWorkflowApi.ts";
import { readDevVars } from "../project/devVars.ts";
import { projectSlugFor } from "../project/projectSlugFor.ts";
import { waitForProject } from "../project/waitForProject.ts";

/**
 * `platform dev --node`: the project in this Node 22 process, with no workerd.
 *
 * The project is bundled for Node (`buildProject(..., { target: "node" })`),
 * whose generated entry loads in the platform's initialization order: the
 * runtime's workflow capability injects the cron registrar as user code
 * imports it, then the project's top-level `workflow()` calls run (the first
 * registers the recovery cron), then (here) the node:sqlite workflow backend is
 * injected, and only then does the server answer requests, so
 * `workflow.start/get/list` are available to every handler. The default
 * export is `createPlatformWorker(project)`, the same wrapper a worker gets,
 * served over node:http.
 *
 * Not here: the gateway, the API worker, D1, queues, Durable Objects. Internal
 * routes (`/__workflow`, `/__cron`, …) answer 404 as they do to any external
 * caller, because no platform caller exists to sign for them. In the API
 * worker's place, `<url>/__platform/api` answers its workflow routes for the
 * CLI (nodeWorkflowApi.ts), with a CLI token made at each start.
 */

export interface NodeProjectServerOptions {
  projectDir: string;
  /** `<dir>/.platform`; the Node host keeps its files in `<stateDir>/node/`. */
  stateDir: string;
  port: number;
  host?: string;
  log?: (line: string) => void;
  logError?: (line: string, error?: unknown) => void;
  /** Called once per answered request. */
  onRequest?: (request: RequestRecord) => void;
}

export interface NodeProjectServer {
  url: string;
  slug: string;
  build: ProjectBuild;
  /** The workflow store file, whether or not the project uses workflows yet. */
  workflowsPath: string;
  /** Where the CLI finds the API's workflow routes (`platform workflow …`), and the token they take. */
  apiUrl: string;
  cliToken: string;
  /** Rebuilds and swaps the project in; on a failed build the previous version keeps serving. */
  rebuild(): Promise<ProjectBuild>;
  stop(): Promise<void>;
}

/** The handler shape of `createPlatformWorker(project)` (typed here without the workers types). */
interface PlatformWorkerHandler {
  fetch(request: Request, env: Record<string, unknown>, ctx: NodeExecutionContext): Promise<Response>;
}

interface NodeExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
  passThroughOnException(): void;
  props: Record<string, unknown>;
}

/** What a Node bundle of a project exports (see buildProject's node entry). */
interface NodeProjectModule {
  default: PlatformWorkerHandler;
  installNodeWorkflowBackend?: (options: NodeWorkflowBackendOptions) => NodeWorkflowBackend;
}

interface LoadedProject {
  worker: PlatformWorkerHandler;
  env: Record<string, unknown>;
  backend: NodeWorkflowBackend | null;
}

/** How long a stopping backend waits for running steps; an abandoned step is resumed by the next start's recovery. */
const CLOSE_GRACE_MS = 1_500;

export function nodeStateDir(stateDir: string): string {
  return path.join(stateDir, "node");
}

export async function startNodeProjectServer(options: NodeProjectServerOptions): Promise<NodeProjectServer> {
  const host = options.host ?? "127.0.0.1";
  const log = options.log ?? ((line: string) => console.log(line));
  const logError =
    options.logError ??
    ((line: string, error?: unknown) => (error === undefined ? console.error(line) : console.error(line, error)));
  const dir = nodeStateDir(options.stateDir);
  const buildDir = path.join(dir, "build");
  const workflowsPath = path.join(dir, "workflows.sqlite");
  mkdirSync(dir, { recursive: true });
  const slug = projectSlugFor(options.projectDir);
  const url = `http://${host}:${options.port}`;

  let generation = 0;
  /** Evaluates a bundle: the runtime it imports (cron registrar), then the project's top-level code (its workflow() calls). */
  const evaluate = async (build: ProjectBuild): Promise<NodeProjectModule> => {
    // A fresh URL is a fresh module instance: new workflow registry, new runtime state.
    const module = (await import(`${pathToFileURL(build.bundlePath).href}?v=${++generation}`).catch(
      (error: unknown) => {
        throw nodeLoadFailure(error, options.projectDir);
      },
    )) as NodeProjectModule;
    if (!module.default || typeof module.default.fetch !== "function")
      throw new Error(`${build.bundlePath} has no platform worker export.`);
    return module;
  };
  // Dev only, as workerd's binding of the same name (localPlatform.ts): the stack for the 500 page
  // (src/runtime/entry/devErrorResponse.ts). Node's source maps already point its frames at the
  // sources; this names them relative to the project, as under workerd.
  const devStack = {
    async fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
      return new Response(projectRelativeStack(await new Request(input, init).text(), options.projectDir));
    },
  };
  /** Then the store and engine are injected; from here on workflow.start/get/list work. */
  const activate = (module: NodeProjectModule, vars: Record<string, string>): LoadedProject => {
    // The project's .dev.vars, beside the platform's own (which they cannot name: readDevVars refuses PLATFORM_*).
    const env = {
      ...vars,
      PLATFORM_LOCAL: "1",
      PLATFORM_PROJECT_SLUG: slug,
      PLATFORM_PROJECT_URL: url,
      PLATFORM_DEV_STACK: devStack,
    };
    const backend =
      module.installNodeWorkflowBackend?.({
        path: workflowsPath,
        closeGraceMS: CLOSE_GRACE_MS,
        log,
        logError: (message, error) => logError(message, error),
        env,
      }) ?? null;
    return { worker: module.default, env, backend };
  };

  // Stacks of the project's code name its sources (the dev bundle links its map).
  process.setSourceMapsEnabled(true);
  let build = await buildProject(options.projectDir, buildDir, { target: "node", sourceMap: true });
  let current = activate(await evaluate(build), readDevVars(options.projectDir));

  const cliToken = `plt_${randomBytes(32).toString("base64url")}`;
  const workflowApi = createNodeWorkflowApi({ slug, cliToken, backend: () => current.backend });
  const server = createServer(
    (req, res) => void serve(current, workflowApi, req, res, url, logError, options.onRequest),
  );
  // Node's defaults would keep an idle keep-alive socket (and so `stop()`) waiting.
  server.keepAliveTimeout = 1_000;
  try {
    await listen(server, options.port, host);
    await waitForProject(url + "/");
  } catch (error) {
    server.closeAllConnections();
    server.close();
    await current.backend?.close();
    throw error;
  }

  let swapping: Promise<unknown> = Promise.resolve();
  return {
    url,
    slug,
    workflowsPath,
    apiUrl: url + NODE_API_PATH,
    cliToken,
    get build() {
      return build;
    },
    rebuild() {
      // One swap at a time. A bundle that fails to build or to evaluate leaves the running version alone;
      // otherwise the old backend stops (at a step boundary) before the new one opens the file and resumes its runs.
      const swap = swapping.then(async () => {
        const next = await buildProject(options.projectDir, buildDir, { target: "node", sourceMap: true });
        const vars = readDevVars(options.projectDir);
        const module = await evaluate(next);
        await current.backend?.close();
        current = activate(module, vars);
        build = next;
        return next;
      });
      swapping = swap.catch(() => {});
      return swap;
    },
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await swapping;
      await current.backend?.close();
      await closed;
      // The esbuild service process would otherwise outlive us until its pipe closes.
      await esbuild.stop();
    },
  };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => {
      reject(
        error.code === "EADDRINUSE" ? new Error(`Port ${port} on ${host} is already in use; pass --port N.`) : error,
      );
    };
    server.once("error", failed);
    server.listen(port, host, () => {
      server.off("error", failed);
      resolve();
    });
  });
}

/** node:http request → web Request → the platform worker → web Response → node:http response. */
async function serve(
  project: LoadedProject,
  workflowApi: { fetch(request: Request): Promise<Response> },
  req: IncomingMessage,
  res: ServerResponse,
  origin: string,
  logError: (line: string, error?: unknown) => void,
  onRequest?: (request: RequestRecord) => void,
) {
  const started = Date.now();
  res.once("finish", () =>
    onRequest?.({
      method: req.method ?? "GET",
      path: (req.url ?? "/").split("?")[0]!,
      status: res.statusCode,
      ms: Date.now() - started,
    }),
  );
  const aborted = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) aborted.abort();
  });
  const ctx: NodeExecutionContext = {
    waitUntil(promise) {
      void Promise.resolve(promise).catch((error: unknown) => logError("A waitUntil() task failed:", error));
    },
    passThroughOnException() {},
    props: {},
  };
  try {
    const request = await toWebRequest(req, origin, aborted.signal);
    const response = new URL(request.url).pathname.startsWith(`${NODE_API_PATH}/`)
      ? await workflowApi.fetch(request)
      : await project.worker.fetch(request, project.env, ctx);
    await writeWebResponse(response, req.method === "HEAD", res);
  } catch (error) {
    if (aborted.signal.aborted) return;
    logError(`${req.method} ${req.url} failed:`, error);
    if (!res.headersSent) {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          error: { code: "internal", message: "The project failed to answer; see the platform dev output." },
        }),
      );
    } else {
      res.destroy();
    }
  }
}

async function toWebRequest(req: IncomingMessage, origin: string, signal: AbortSignal): Promise<Request> {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!;
    // HTTP/2 pseudo-headers and hop-by-hop framing are not part of a fetch Request.
    if (name.startsWith(":") || /^(transfer-encoding|connection|keep-alive)$/i.test(name)) continue;
    headers.append(name, req.rawHeaders[i + 1]!);
  }
  const method = req.method ?? "GET";
  const host = req.headers.host;
  const url = new URL(req.url ?? "/", host ? `http://${host}` : origin);
  let body: ArrayBuffer | undefined;
  if (method !== "GET" && method !== "HEAD") {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const bytes = Buffer.concat(chunks);
    body = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }
  return new Request(url, { method, headers, body, signal, redirect: "manual" });
}

async function writeWebResponse(response: Response, head: boolean, res: ServerResponse): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of response.headers) {
    if (name === "set-cookie") continue;
    headers[name] = value;
  }
  const cookies = response.headers.getSetCookie();
  if (cookies.length) headers["set-cookie"] = cookies;
  res.writeHead(response.status, response.statusText || undefined, headers);
  if (head || !response.body) {
    res.end();
    await response.body?.cancel();
    return;
  }
  for await (const chunk of response.body) {
    if (!res.write(chunk)) await new Promise((resolve) => res.once("drain", resolve));
  }
  res.end();
}
