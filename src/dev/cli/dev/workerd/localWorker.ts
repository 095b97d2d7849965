import path from "node:path";
import type { V4WorkerOptions } from "miniflare";
import type { DeployedWorker } from "./deployedWorkers.ts";

/** What only a local platform gives a deployed worker. */
export interface LocalOverride {
  /** Vars and secrets with their local values; `undefined` leaves a var out (what it names does not run locally). */
  vars?: Record<string, string | undefined>;
  /** Service bindings to workers only the local platform runs (fake providers, dev hooks). */
  services?: NonNullable<V4WorkerOptions["serviceBindings"]>;
  /** Its own socket, beside the entry port. */
  socket?: { host: string; port: number };
}

/**
 * How platform workers reach project workers locally (src/workers/dispatch/dispatcher.ts):
 * `LOCAL_SCRIPTS` (script name → binding) and those bindings; under `platform up`
 * also `front`, bound as `LOCAL_DISPATCH`, in front of every pushed project.
 */
export interface LocalDispatcher {
  scripts: Record<string, string>;
  bindings: Record<string, string>;
  front?: NonNullable<V4WorkerOptions["serviceBindings"]>[string];
}

/** A local D1 database is kept under this id (`.platform/state`), whatever id the deploy fills in. */
export const localD1Id = (databaseName: string) => `${databaseName}-db`;

/** A local queue has nothing to wait for: deliver a batch at once, so a workflow step starts when it is asked for. */
const LOCAL_QUEUE_BATCH_TIMEOUT_S = 0.05;

/**
 * A deployed worker as the local platform runs it: wrangler's options for its
 * config, under its deployed name, with only what is local by nature
 * replaced: its bundle, D1 ids, the dispatcher for its dispatch namespaces
 * (they do not run locally), queue batching, sockets instead of routes, and
 * the override's vars, secrets and local-only services.
 */
export function localWorker(
  deployed: DeployedWorker,
  scriptPath: string,
  dispatcher: LocalDispatcher,
  override: LocalOverride = {},
): V4WorkerOptions {
  // Routes and zones are the deploy's: locally each worker has a socket instead.
  const { rootPath: _rootPath, zone: _zone, modulesRules: _rules, ...options } = deployed.options;
  const hasDispatcher = deployed.dispatchNamespaces.length > 0;
  const vars = Object.entries({
    ...(options.bindings as Record<string, unknown>),
    ...override.vars,
    ...(hasDispatcher ? { LOCAL_SCRIPTS: JSON.stringify(dispatcher.scripts) } : {}),
  }).filter(([, value]) => value !== undefined);
  return {
    ...options,
    name: deployed.name,
    modules: true,
    scriptPath,
    // Module names are relative to modulesRoot, and workerd refuses paths that climb out with "..".
    modulesRoot: path.dirname(scriptPath),
    bindings: Object.fromEntries(vars) as V4WorkerOptions["bindings"],
    d1Databases: Object.fromEntries(
      Object.keys(options.d1Databases ?? {}).map((binding) => [
        binding,
        localD1Id(deployed.d1DatabaseNames[binding] ?? binding),
      ]),
    ),
    queueConsumers: Object.fromEntries(
      Object.entries((options.queueConsumers ?? {}) as Record<string, object>).map(([queue, consumer]) => [
        queue,
        { ...consumer, maxBatchTimeout: LOCAL_QUEUE_BATCH_TIMEOUT_S },
      ]),
    ),
    serviceBindings: {
      ...(options.serviceBindings as Record<string, unknown>),
      ...(hasDispatcher ? dispatcher.bindings : {}),
      ...(hasDispatcher && dispatcher.front ? { LOCAL_DISPATCH: dispatcher.front } : {}),
      ...override.services,
    } as V4WorkerOptions["serviceBindings"],
    ...(override.socket ? { unsafeDirectSockets: [override.socket] } : {}),
  };
}
