import os from "node:os";
import path from "node:path";

/**
 * Where `platform up` keeps its state when given no `--state`: the user's
 * state folder, `$XDG_STATE_HOME/platform/up` (default
 * `~/.local/state/platform/up`), as the CLI's credentials live in the user's
 * config folder: never in the folder it was started from, which is usually a
 * project (and its git repository).
 */
export function defaultUpStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const state = env.XDG_STATE_HOME && path.isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : null;
  return path.join(state ?? path.join(env.HOME || os.homedir(), ".local", "state"), "platform", "up");
}
