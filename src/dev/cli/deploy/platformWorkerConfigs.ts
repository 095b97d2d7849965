import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { experimental_readRawConfig, type Unstable_RawConfig } from "wrangler";

/** One platform worker as its committed wrangler.toml declares it. */
export interface PlatformWorkerConfig {
  /** The worker's script name (`name` in its config), e.g. `platform-api`. */
  name: string;
  /** The config's path relative to the repository, e.g. `src/workers/gateway/wrangler.toml`. */
  configPath: string;
  /** The parsed config, as wrangler reads it (no defaults filled in). */
  raw: Unstable_RawConfig;
}

/** The one worker whose config sits at the repository root: the API worker. */
const ROOT_CONFIG = "wrangler.toml";
/** The platform's public front door: it answers every project's traffic, so it goes out last among equals. */
const FRONT_DOOR_DIR = "src/workers/gateway";

/**
 * Every platform worker's config: the root (API) worker, the plugins
 * (`src/plugins/<id>/wrangler.toml`) and the other workers
 * (`src/workers/<id>/wrangler.toml`), in the order the deploy prefers among
 * workers whose bindings leave it free (API, plugins, others, gateway last).
 */
export function platformWorkerConfigPaths(repoRoot: string): string[] {
  const configsUnder = (dir: string) =>
    readdirSync(path.join(repoRoot, dir), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && existsSync(path.join(repoRoot, dir, entry.name, "wrangler.toml")))
      .map((entry) => `${dir}/${entry.name}`)
      .sort();
  const others = configsUnder("src/workers").filter((dir) => dir !== FRONT_DOOR_DIR);
  const frontDoor = existsSync(path.join(repoRoot, FRONT_DOOR_DIR, "wrangler.toml")) ? [FRONT_DOOR_DIR] : [];
  return [
    ROOT_CONFIG,
    ...[...configsUnder("src/plugins"), ...others, ...frontDoor].map((dir) => `${dir}/wrangler.toml`),
  ];
}

export function readPlatformWorkerConfigs(repoRoot: string): PlatformWorkerConfig[] {
  return platformWorkerConfigPaths(repoRoot).map((configPath) => {
    const { rawConfig } = experimental_readRawConfig({ config: path.join(repoRoot, configPath) });
    if (!rawConfig.name) throw new Error(`${configPath} has no \`name\`.`);
    return { name: rawConfig.name, configPath, raw: rawConfig };
  });
}
