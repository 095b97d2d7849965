import path from "node:path";
import { experimental_readRawConfig, type Unstable_RawConfig } from "wrangler";
import { platformWorkerConfigPaths } from "./platformWorkerConfigPaths.ts";

/** One platform worker as its committed wrangler.toml declares it. */
export interface PlatformWorkerConfig {
  /** The worker's script name (`name` in its config), e.g. `platform-api`. */
  name: string;
  /** The config's path relative to the repository, e.g. `src/workers/gateway/wrangler.toml`. */
  configPath: string;
  /** The parsed config, as wrangler reads it (no defaults filled in). */
  raw: Unstable_RawConfig;
}

export function readPlatformWorkerConfigs(repoRoot: string): PlatformWorkerConfig[] {
  return platformWorkerConfigPaths(repoRoot).map((configPath) => {
    const { rawConfig } = experimental_readRawConfig({ config: path.join(repoRoot, configPath) });
    if (!rawConfig.name) throw new Error(`${configPath} has no \`name\`.`);
    return { name: rawConfig.name, configPath, raw: rawConfig };
  });
}
