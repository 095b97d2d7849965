import { fileURLToPath } from "node:url";
import path from "node:path";

/**
 * Where the platform's own files are. The CLI runs in one of two layouts with
 * the same tree: this repository (TypeScript sources run by Node 22's type
 * stripping) or the installed `platform` package (`node_modules/platform`,
 * built by `npm run package`), which ships the TypeScript sources under
 * `src/` beside the compiled JavaScript under `dist/` (same folders). Either
 * way this module sits three folders below the root, and everything the CLI
 * bundles (the runtime, the platform's workers, the console) is read from
 * `src/`, so a project's bundle and the entry wrapped around it come from one
 * copy of the runtime.
 */
const HERE = fileURLToPath(import.meta.url);

/** The root of the repository or of the installed package: `src/`, `migrations/`, `demo/`, `bin/`. */
export const REPO_ROOT = path.resolve(path.dirname(HERE), "../../..");
/** `.ts` when the CLI runs from the repository's sources, `.js` when it runs compiled from the package. */
export const MODULE_EXTENSION = path.extname(HERE);
/** True when the CLI runs from the installed package (its compiled `dist/`), not from a checkout. */
export const RUNS_FROM_PACKAGE = MODULE_EXTENSION === ".js";
export const RUNTIME_DIR = path.join(REPO_ROOT, "src/runtime");
export const REPO_NODE_MODULES = path.join(REPO_ROOT, "node_modules");
export const DEMO_PROJECT_DIR = path.join(REPO_ROOT, "demo");
export const MIGRATIONS_DIR = path.join(REPO_ROOT, "migrations");
/** What `platform dev` and `up` keep between starts (startCache.ts): `node_modules/.cache/platform` of the checkout, or of the project the package is installed in. */
export const START_CACHE_DIR = path.join(nodeModulesOf(REPO_ROOT), ".cache", "platform");
/** Node's compile cache for the CLI's own modules (main.ts), beside the start cache. */
export const COMPILE_CACHE_DIR = path.join(START_CACHE_DIR, "node-compile-cache");
/** The console's static files (HTML, CSS, browser modules), served by the API worker under /console/. */
export const CONSOLE_ASSETS_DIR = path.join(REPO_ROOT, "src/console/public");

/** A module of the running CLI beside `url` (its own `import.meta.url`), named without extension: `./watchdogProcess`. */
export function cliModulePath(url: string, name: string): string {
  return fileURLToPath(new URL(`${name}${MODULE_EXTENSION}`, url));
}

/** The `node_modules` that holds `root` when it is an installed package (`@scope/` too), else `root`'s own. */
function nodeModulesOf(root: string): string {
  const parent = path.dirname(root);
  if (path.basename(parent) === "node_modules") return parent;
  if (path.basename(parent).startsWith("@") && path.basename(path.dirname(parent)) === "node_modules")
    return path.dirname(parent);
  return path.join(root, "node_modules");
}
