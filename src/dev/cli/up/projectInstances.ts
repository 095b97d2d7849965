import { existsSync, mkdirSync, renameSync } from "node:fs";
import path from "node:path";
import type { Request as MiniflareRequest } from "miniflare";
import { convertV4MiniflareOptions, Miniflare, NoOpLog, MiniflareResponse } from "../../cloudflare/miniflareModule.ts";
import { LOCAL_DISPATCH_SCRIPT_HEADER } from "../../../workers/dispatch/localDispatchHeader.ts";
import type { AcceptedScript } from "../../cloudflare/scriptUploadStandIn.ts";
import { withoutServicePrefix } from "../../cloudflare/workerdScriptStarter.ts";
import { scriptWorker } from "./scriptWorker.ts";
import { type TraceIntake, withTailForwarder } from "./tailForwarder.ts";

export interface ProjectInstancesOptions {
  /** `platform up`'s state folder: each project keeps its own under `scripts/<name>/state/`. */
  stateDir: string;
  /** The platform workers a project's service bindings name, by deployed name, as `host:port` of their sockets. */
  services: Readonly<Record<string, string>>;
  /** Where a project's traces go, for its log: the platform's trace intake. */
  traces: TraceIntake;
  log: (line: string) => void;
  /** How long a replaced workerd may go on answering the requests it took before it stops. */
  drainMS?: number;
  /** `host:port` pairs every project may fetch although they are refused otherwise (`--allow-outbound`). */
  allowOutbound?: readonly string[];
}

/**
 * `platform up`'s dispatch namespace: every pushed project runs in a workerd
 * of its own, so that taking in a push, or a script that fails at start,
 * touches that project only; the platform's workerd and every other project
 * go on answering. The platform workers reach them through `dispatch`
 * (bound as `LOCAL_DISPATCH`, src/workers/dispatch/dispatcher.ts).
 */
export interface ProjectInstances {
  /**
   * Serves `script` in a fresh workerd in place of the one running its
   * previous version, which first finishes what it is answering. Requests
   * that arrive meanwhile wait for the new one. Resolves true once the new
   * version answers; false when it did not start (said on `log`), in which
   * case the previous version, if any, is served again.
   */
  serve(script: AcceptedScript): Promise<boolean>;
  /** Answers a platform worker's request to the project named by LOCAL_DISPATCH_SCRIPT_HEADER. */
  dispatch(request: MiniflareRequest): Promise<MiniflareResponse>;
  stop(): Promise<void>;
}

interface Instance {
  script: AcceptedScript;
  mf: Miniflare;
  inFlight: number;
  /** Resolves once nothing is in flight (waited for before this instance stops). */
  idle: Promise<void>;
  markIdle: () => void;
}

const DEFAULT_DRAIN_MS = 10_000;

export function createProjectInstances(options: ProjectInstancesOptions): ProjectInstances {
  const { log, services } = options;
  const drainMS = options.drainMS ?? DEFAULT_DRAIN_MS;
  /** Each project's current instance; replaced (synchronously) as soon as a new version is on its way. */
  const slots = new Map<string, Promise<Instance | null>>();

  async function start(script: AcceptedScript): Promise<Instance> {
    const startupErrors: string[] = [];
    let started = false;
    const stateDir = projectStateDir(options.stateDir, script.name);
    adoptSharedState(options.stateDir, script, stateDir);
    const workers = await withTailForwarder(
      scriptWorker(script, services, options.allowOutbound),
      script,
      options.traces,
    );
    const mf = new Miniflare(
      convertV4MiniflareOptions({
        log: new NoOpLog(),
        cf: false,
        resourcePersistencePath: stateDir,
        handleStructuredLogs: ({ level, message }) => {
          if (!started) {
            if (level === "error") startupErrors.push(withoutServicePrefix(message));
            return;
          }
          if (level === "error" || level === "warn") console.error(message);
          else console.log(message);
        },
        workers,
      }),
    );
    try {
      await mf.ready;
    } catch (error) {
      await mf.dispose().catch(() => {});
      throw new Error(startupErrors.join("\n") || (error instanceof Error ? error.message : String(error)));
    }
    started = true;
    let markIdle = () => {};
    const idle = new Promise<void>((resolve) => (markIdle = resolve));
    return { script, mf, inFlight: 0, idle, markIdle };
  }

  async function retire(instance: Instance): Promise<void> {
    if (instance.inFlight > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([instance.idle, new Promise((resolve) => (timer = setTimeout(resolve, drainMS)))]);
      clearTimeout(timer);
    }
    await instance.mf.dispose().catch(() => {});
  }

  async function replace(previous: Promise<Instance | null> | undefined, script: AcceptedScript) {
    const old = await previous;
    if (old) await retire(old);
    try {
      return await start(script);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      if (!old) {
        log(`Not serving ${script.name}: it did not start: ${reason}`);
        return null;
      }
      log(`Not serving the new version of ${script.name}: it did not start: ${reason}. Serving the previous one.`);
      return start(old.script).catch((again: unknown) => {
        log(`Not serving ${script.name}: its previous version did not start again either: ${String(again)}`);
        return null;
      });
    }
  }

  /** The instance to send a request to, once any swap under way is done; null when the project serves nothing. */
  async function current(name: string): Promise<Instance | null> {
    for (;;) {
      const slot = slots.get(name);
      if (!slot) return null;
      const instance = await slot;
      // A swap began while waiting: go to the version that replaces this one.
      if (slots.get(name) !== slot) continue;
      if (instance) instance.inFlight++;
      return instance;
    }
  }

  function release(instance: Instance): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (--instance.inFlight === 0) instance.markIdle();
    };
  }

  return {
    async serve(script) {
      const next = replace(slots.get(script.name), script);
      slots.set(script.name, next);
      return (await next)?.script === script;
    },

    async dispatch(request) {
      const name = request.headers.get(LOCAL_DISPATCH_SCRIPT_HEADER) ?? "";
      const instance = await current(name);
      if (!instance) return notServed(`Project worker ${name || "(none named)"} is not deployed.`);
      const done = release(instance);
      const headers = new Headers(request.headers as unknown as Headers);
      headers.delete(LOCAL_DISPATCH_SCRIPT_HEADER);
      let response: MiniflareResponse;
      try {
        response = await instance.mf.dispatchFetch(request.url, {
          method: request.method,
          headers: [...headers],
          body: request.body,
          duplex: "half",
          redirect: "manual",
        });
      } catch (error) {
        done();
        return notServed(`Project worker ${name} did not answer: ${error instanceof Error ? error.message : error}`);
      }
      if (!response.body || response.webSocket) {
        done();
        return response;
      }
      // The instance counts as busy until the body has been read to its end.
      const body = response.body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({ flush: done }) as never);
      return new MiniflareResponse(body as ConstructorParameters<typeof MiniflareResponse>[0], response);
    },

    async stop() {
      const instances = await Promise.all(slots.values());
      slots.clear();
      await Promise.all(instances.map((instance) => instance?.mf.dispose().catch(() => {})));
    },
  };
}

function notServed(message: string): MiniflareResponse {
  return MiniflareResponse.json({ error: { code: "upstream_error", message } }, { status: 502 });
}

/** `<state>/scripts/<name>/state`: the project's Durable Objects and cache, owned by its workerd alone. */
export function projectStateDir(stateDir: string, scriptName: string): string {
  return path.join(stateDir, "scripts", scriptName, "state");
}

/**
 * Projects pushed before each ran in its own workerd kept their Durable
 * Objects in the platform's state (`<state>/state/do/<script>-<class>`):
 * moved into the project's own the first time it starts, so nothing is lost.
 */
function adoptSharedState(stateDir: string, script: AcceptedScript, ownDir: string): void {
  for (const className of script.durableObjectClasses) {
    // Miniflare keeps a namespace's objects under `do/<worker name>-<class name>`.
    const namespace = `${script.name}-${className}`;
    const shared = path.join(stateDir, "state", "do", namespace);
    const own = path.join(ownDir, "do", namespace);
    if (!existsSync(shared) || existsSync(own)) continue;
    mkdirSync(path.dirname(own), { recursive: true });
    renameSync(shared, own);
  }
}
