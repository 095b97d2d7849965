import type { Plugin } from "esbuild";
import { existsSync } from "node:fs";
import path from "node:path";
import { RUNTIME_DIR } from "../repoPaths.ts";

/** The project's own `node_modules/platform`, if it installed one, searching up from its directory. */
function projectOwnPlatform(projectDir: string): boolean {
  for (let dir = projectDir; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "node_modules", "platform", "package.json"))) return true;
    if (path.dirname(dir) === dir) return false;
  }
}

/** `platform/testing` drives workflows inside a Node test; a deployed project has no use for it. */
export const TESTING_IN_BUNDLE_MESSAGE =
  'The workflow test kit is for tests run by Node (vitest): `platform/testing` cannot be part of a project\'s bundle. Import it only from test files, and from "platform" in project code.';

/**
 * Resolves `platform` to this repository's runtime, so a project anywhere on
 * disk builds without an install of its own; a project that installed
 * `platform` itself gets that copy. Node and Cloudflare built-ins stay external.
 * `platform/testing` (the workflow test kit) is refused, whichever copy.
 */
export function platformResolver(projectDir: string): Plugin {
  const ownCopy = projectOwnPlatform(projectDir);
  return {
    name: "platform-resolver",
    setup(build) {
      build.onResolve({ filter: /^platform$/ }, () =>
        ownCopy ? undefined : { path: path.join(RUNTIME_DIR, "index.ts"), sideEffects: false },
      );
      build.onResolve({ filter: /^platform\/testing(\/.*)?$/ }, (args) => ({
        errors: [
          { text: `${TESTING_IN_BUNDLE_MESSAGE} (imported "${args.path}" from ${args.importer || "the entry"})` },
        ],
      }));
      build.onResolve({ filter: /^(cloudflare|node):/ }, (args) => ({ path: args.path, external: true }));
    },
  };
}
