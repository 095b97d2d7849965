import { existsSync, readdirSync } from "node:fs";
import path from "node:path";

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
