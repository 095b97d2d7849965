import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { SourcelessWorkerOptions } from "wrangler";
import { platformWorkerConfigPaths } from "../../deploy/platformWorkerConfigPaths.ts";
import { cacheKey, type StartCache, startCache } from "./startCache.ts";

/** One platform worker as `npm run deploy` ships it, in Miniflare's terms. */
export interface DeployedWorker {
  /** The worker's script name (`name` in its config), e.g. `platform-api`; the local platform runs it under it. */
  name: string;
  /** The config's path relative to the repository, e.g. `src/plugins/chatserver/wrangler.toml`. */
  configPath: string;
  /** The entry module (`main`), absolute. */
  main: string;
  /**
   * Every binding as wrangler maps the config for local development, with
   * the config's own vars (never a stray `.dev.vars` or `.env`) and without
   * its dispatch namespaces, which do not run locally.
   */
  options: SourcelessWorkerOptions;
  /** The binding names of its dispatch namespaces (a local platform gives it the dispatcher instead). */
  dispatchNamespaces: string[];
  /** Its D1 bindings' database names, by binding. */
  d1DatabaseNames: Record<string, string>;
}

/**
 * The platform's workers from the same wrangler.toml files the deploy reads
 * (`platformWorkerConfigPaths`), turned into Miniflare options by wrangler
 * itself (`unstable_getMiniflareWorkerOptions`). Wrangler is loaded here, not
 * when the CLI starts, and only when the configs or wrangler changed since the
 * last start: it takes over a second to import (startCache.ts keeps the answer,
 * keyed by the configs' text and wrangler's version).
 */
export async function readDeployedWorkers(
  repoRoot: string,
  cache: StartCache = startCache(),
): Promise<DeployedWorker[]> {
  const configPaths = platformWorkerConfigPaths(repoRoot);
  const key = cacheKey("deployed-workers", [
    wranglerVersion(),
    repoRoot,
    ...configPaths.flatMap((configPath) => [configPath, readFileSync(path.join(repoRoot, configPath))]),
  ]);
  const cached = parsedOrNull(cache.read(key));
  if (cached !== null) return cached;
  const deployed = await readWithWrangler(repoRoot, configPaths);
  cache.write(key, JSON.stringify(deployed));
  return deployed;
}

async function readWithWrangler(repoRoot: string, configPaths: string[]): Promise<DeployedWorker[]> {
  const { unstable_getMiniflareWorkerOptions, unstable_readConfig } = await import("wrangler");
  return configPaths.map((configPath) => {
    const config = unstable_readConfig({ config: path.join(repoRoot, configPath) });
    if (!config.name) throw new Error(`${configPath} has no \`name\`.`);
    if (!config.main) throw new Error(`${configPath} has no \`main\`.`);
    const { workerOptions } = unstable_getMiniflareWorkerOptions({ ...config, dispatch_namespaces: [] });
    return {
      name: config.name,
      configPath,
      main: config.main,
      options: { ...workerOptions, bindings: { ...config.vars } as SourcelessWorkerOptions["bindings"] },
      dispatchNamespaces: config.dispatch_namespaces.map((namespace: { binding: string }) => namespace.binding),
      d1DatabaseNames: Object.fromEntries(
        config.d1_databases.map((db: { binding: string; database_name?: string }) => [
          db.binding,
          db.database_name ?? db.binding,
        ]),
      ),
    };
  });
}

/** A cached answer, or null when there is none or it does not parse (then wrangler reads the configs again). */
function parsedOrNull(text: string | null): DeployedWorker[] | null {
  if (text === null) return null;
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? (parsed as DeployedWorker[]) : null;
  } catch {
    return null;
  }
}

/** The installed wrangler's version, read without loading wrangler. */
function wranglerVersion(): string {
  const manifest = createRequire(import.meta.url).resolve("wrangler/package.json");
  return (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version;
}

/** The plugin workers: every config under src/plugins/. */
export function pluginWorkerNames(deployed: DeployedWorker[]): string[] {
  return deployed.filter((worker) => worker.configPath.startsWith("src/plugins/")).map((worker) => worker.name);
}
