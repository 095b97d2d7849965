import path from "node:path";
import type { Unstable_RawConfig } from "wrangler";
import { PLACEHOLDER_DOMAIN } from "./platformEnvironment.ts";
import type { PlatformWorkerConfig } from "./platformWorkerConfigs.ts";

export interface ConfigInputs {
  repoRoot: string;
  /** D1 ids by database name. */
  d1Ids: Record<string, string>;
  /** Where PLATFORM_DOMAIN, CLOUDFLARE_ACCOUNT_ID and var overrides are read from. */
  env: NodeJS.ProcessEnv;
  /** Service bindings left out of a first pass. */
  omitServices?: string[];
}

const withDomain = (text: string, domain: string | undefined) =>
  domain ? text.replaceAll(PLACEHOLDER_DOMAIN, domain) : text;

/**
 * The config a worker is deployed with, written to a temporary file so the
 * committed wrangler.toml stays as it is: the committed config with the D1
 * ids filled in, paths made absolute (the file lives elsewhere),
 * `PLATFORM_DOMAIN` in place of the placeholder domain, and each var
 * replaced by an environment variable of the same name when one is set.
 */
export function generatedConfig(worker: PlatformWorkerConfig, inputs: ConfigInputs): Unstable_RawConfig {
  const { raw } = worker;
  const configDir = path.dirname(path.join(inputs.repoRoot, worker.configPath));
  const absolute = (p: string) => path.resolve(configDir, p);
  const domain = inputs.env.PLATFORM_DOMAIN;
  const omit = new Set(inputs.omitServices ?? []);

  const config: Unstable_RawConfig = { ...raw };
  if (raw.main) config.main = absolute(raw.main);
  if (raw.assets?.directory) config.assets = { ...raw.assets, directory: absolute(raw.assets.directory) };
  if (raw.d1_databases)
    config.d1_databases = raw.d1_databases.map((db) => ({
      ...db,
      database_id: (db.database_name && inputs.d1Ids[db.database_name]) || db.database_id,
      ...(db.migrations_dir ? { migrations_dir: absolute(db.migrations_dir) } : {}),
    }));
  if (raw.services) config.services = raw.services.filter((s) => !omit.has(s.binding));
  if (raw.routes)
    config.routes = raw.routes.map((route) =>
      typeof route === "string"
        ? withDomain(route, domain)
        : (Object.fromEntries(
            Object.entries(route).map(([k, v]) => [k, typeof v === "string" ? withDomain(v, domain) : v]),
          ) as typeof route),
    );
  if (raw.vars)
    config.vars = Object.fromEntries(
      Object.entries(raw.vars).map(([name, value]) => [
        name,
        inputs.env[name] ?? (typeof value === "string" ? withDomain(value, domain) : value),
      ]),
    );
  return config;
}
