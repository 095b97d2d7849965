/**
 * The installable `platform` package's package.json, made from this
 * repository's. The repository is private and keeps its tools as
 * devDependencies; the package is what a project installs, so it depends on
 * everything its runtime and its CLI load when they run.
 */

export interface RepositoryManifest {
  name: string;
  version: string;
  description?: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

/**
 * What the CLI loads beside the runtime's own dependencies (which are the
 * repository's `dependencies`): the bundler, the local Workers runtime,
 * wrangler (the local platform reads the platform workers' wrangler.toml
 * through it), the local sign-in provider, the Node 22 it runs on, and the
 * Workers types a project's tsconfig names.
 */
export const CLI_DEPENDENCIES = [
  "esbuild",
  "miniflare",
  "wrangler",
  "oidc-provider",
  "node",
  "@cloudflare/workers-types",
] as const;

/** The tools a project brings itself (its own tests and type check); the package names the versions it is tested with. */
export const PROJECT_TOOLS = ["typescript", "vitest"] as const;

/** Where each entry point of the package lives, compiled (`dist/`) and typed. */
export const PACKAGE_ENTRY_POINTS = {
  ".": "runtime/index",
  "./testing": "runtime/testing/index",
  "./node": "runtime/node/index",
} as const;

function versionIn(repository: RepositoryManifest, name: string): string {
  const version = repository.dependencies?.[name] ?? repository.devDependencies?.[name];
  if (!version) throw new Error(`package.json names no version of "${name}", which the platform package needs.`);
  return version;
}

function entry(stem: string, nodeOnly: boolean): Record<string, string> {
  const js = `./dist/${stem}.js`;
  const types = `./dist/${stem}.d.ts`;
  // Worker bundlers (esbuild, wrangler) ask for workerd/worker/browser, Node for node; the runtime module is
  // one for both. The test kit and the node:sqlite host are Node's only: a worker build finds no match.
  return nodeOnly ? { types, node: js } : { types, workerd: js, worker: js, browser: js, node: js, default: js };
}

export function packageManifest(repository: RepositoryManifest): Record<string, unknown> {
  const runtime = Object.keys(repository.dependencies ?? {});
  const dependencies = Object.fromEntries(
    [...runtime, ...CLI_DEPENDENCIES].sort().map((name) => [name, versionIn(repository, name)]),
  );
  return {
    name: repository.name,
    version: repository.version,
    description: repository.description,
    type: "module",
    bin: { platform: "bin/platform.js" },
    exports: {
      ".": entry(PACKAGE_ENTRY_POINTS["."], false),
      "./testing": entry(PACKAGE_ENTRY_POINTS["./testing"], true),
      "./node": entry(PACKAGE_ENTRY_POINTS["./node"], true),
      "./package.json": "./package.json",
    },
    // As in the repository: a capability's module is evaluated only when user code uses it (see src/runtime/index.ts).
    sideEffects: false,
    files: ["bin", "dist", "src", "migrations", "demo", "wrangler.toml", "README.md"],
    // The command starts under Node 20 and re-runs itself under the Node 22 it depends on (bin/platform.js).
    engines: { node: ">=20" },
    dependencies,
    // The versions of a project's own tools the platform is tested with: `platform init` writes them into the
    // project's devDependencies. Not peers: a project with other versions installs without a conflict.
    projectTools: Object.fromEntries(PROJECT_TOOLS.map((name) => [name, versionIn(repository, name)])),
  };
}
