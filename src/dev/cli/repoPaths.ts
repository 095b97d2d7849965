import { fileURLToPath } from "node:url";
import path from "node:path";

/** The platform repository this CLI runs from: `platform` and its dependencies resolve here. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
export const RUNTIME_DIR = path.join(REPO_ROOT, "src/runtime");
export const REPO_NODE_MODULES = path.join(REPO_ROOT, "node_modules");
export const DEMO_PROJECT_DIR = path.join(REPO_ROOT, "demo");
export const MIGRATIONS_DIR = path.join(REPO_ROOT, "migrations");
/** The console's static files (HTML, CSS, browser modules), served by the API worker under /console/. */
export const CONSOLE_ASSETS_DIR = path.join(REPO_ROOT, "src/console/public");

/** The one compatibility date every worker is built and run with (workerd 1.20261023.1 supports up to 2026-10-30). */
export const COMPATIBILITY_DATE = "2026-10-30";
export const COMPATIBILITY_FLAGS = ["nodejs_compat"];
