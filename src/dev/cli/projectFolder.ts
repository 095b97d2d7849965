import { existsSync, readFileSync, realpathSync } from "node:fs";
import path from "node:path";
import { DEMO_PROJECT_DIR, REPO_ROOT } from "./repoPaths.ts";

/**
 * Which project a command without a directory acts on: the one home of that rule
 * for `platform dev` and every command that takes `--dir` (logs, workflow,
 * secret, console, plugin, email). As `wrangler dev` runs the folder it is in:
 * the current folder when it holds a project, the bundled demo only in this
 * repository's own root (where `npm start` runs it), and otherwise the current
 * folder all the same (a command then says there is no project there).
 */
export function projectFolder(dir: string | undefined, cwd: string = process.cwd()): string {
  if (dir !== undefined) return path.resolve(cwd, dir);
  if (!isProjectFolder(cwd) && isRepositoryRoot(cwd)) return DEMO_PROJECT_DIR;
  return path.resolve(cwd);
}

/** A folder with a project in it: its package.json depends on `platform`, or it has a src/index entry. */
export function isProjectFolder(folder: string): boolean {
  if (["ts", "js", "mts", "mjs"].some((ext) => existsSync(path.join(folder, `src/index.${ext}`)))) return true;
  try {
    const manifest = JSON.parse(readFileSync(path.join(folder, "package.json"), "utf8")) as {
      name?: unknown;
      dependencies?: Record<string, unknown>;
      devDependencies?: Record<string, unknown>;
    };
    return (
      manifest.name !== "platform" &&
      ("platform" in (manifest.dependencies ?? {}) || "platform" in (manifest.devDependencies ?? {}))
    );
  } catch {
    return false;
  }
}

function isRepositoryRoot(folder: string): boolean {
  try {
    return realpathSync(folder) === realpathSync(REPO_ROOT) && existsSync(DEMO_PROJECT_DIR);
  } catch {
    return false;
  }
}
