import type { Plugin } from "esbuild";
import path from "node:path";
import { RUNTIME_DIR } from "../repoPaths.ts";

/** `platform/testing` drives workflows inside a Node test; a deployed project has no use for it. */
export const TESTING_IN_BUNDLE_MESSAGE =
  'The workflow test kit is for tests run by Node (vitest): `platform/testing` cannot be part of a project\'s bundle. Import it only from test files, and from "platform" in project code.';

/**
 * Resolves `platform` (and, for Node builds, `platform/node`) to the runtime
 * of the CLI that builds: the installed package's own sources when the CLI
 * runs from `node_modules/platform`, this repository's for a project anywhere
 * on disk built from a checkout. The entry wrapper comes from the same
 * folder, so user code and the wrapper always share one runtime (two copies
 * would be two registries of workflows, routes and plugins). Node and
 * Cloudflare built-ins stay external; `platform/testing` (the test kit) is
 * refused.
 */
export function platformResolver(target: "worker" | "node"): Plugin {
  return {
    name: "platform-resolver",
    setup(build) {
      build.onResolve({ filter: /^platform$/ }, () => ({
        path: path.join(RUNTIME_DIR, "index.ts"),
        sideEffects: false,
      }));
      if (target === "node")
        build.onResolve({ filter: /^platform\/node$/ }, () => ({ path: path.join(RUNTIME_DIR, "node/index.ts") }));
      build.onResolve({ filter: /^platform\/testing(\/.*)?$/ }, (args) => ({
        errors: [
          { text: `${TESTING_IN_BUNDLE_MESSAGE} (imported "${args.path}" from ${args.importer || "the entry"})` },
        ],
      }));
      build.onResolve({ filter: /^(cloudflare|node):/ }, (args) => ({ path: args.path, external: true }));
    },
  };
}
