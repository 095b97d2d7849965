import path from "node:path";
import type { SourcelessWorkerOptions } from "wrangler";

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
 * when the CLI starts: it takes seconds to import and most commands never
 * need it.
 */
export async function readDeployedWorkers(repoRoot: string): Promise<DeployedWorker[]> {
  const { unstable_getMiniflareWorkerOptions, unstable_readConfig } = await import("wrangler");
  const { platformWorkerConfigPaths } = await import("../../deploy/platformWorkerConfigs.ts");
  return platformWorkerConfigPaths(repoRoot).map((configPath) => {
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

/** The plugin workers: every config under src/plugins/. */
export function pluginWorkerNames(deployed: DeployedWorker[]): string[] {
  return deployed.filter((worker) => worker.configPath.startsWith("src/plugins/")).map((worker) => worker.name);
}
