import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import path from "node:path";
import { CliError } from "./commandLine.ts";

/**
 * Refuses to write `target` (a file or folder inside `root`) when a symbolic link on the way there
 * leads out of `root`: `platform init`, `push` and `dev` write only inside the project folder, so a
 * linked `package.json`, `.gitignore` or `.platform` cannot make them change a file elsewhere.
 * Links that stay inside the folder are followed as usual.
 */
export function refuseLinksOutOfProject(root: string, target: string): void {
  const relative = path.relative(root, target);
  // A folder the caller chose elsewhere (a test's, a state folder given with --state) is its own business.
  if (relative.startsWith("..") || path.isAbsolute(relative)) return;
  const realRoot = realpathSync(root);
  let at = root;
  for (const part of relative.split(path.sep).filter(Boolean)) {
    at = path.join(at, part);
    let isLink: boolean;
    try {
      isLink = lstatSync(at).isSymbolicLink();
    } catch {
      return; // Not there yet: what the platform creates from here on is inside the folder.
    }
    if (!isLink) continue;
    let resolved: string;
    try {
      resolved = realpathSync(at);
    } catch {
      resolved = path.resolve(path.dirname(at), readlinkSync(at));
    }
    const inside = path.relative(realRoot, resolved);
    if (inside.startsWith("..") || path.isAbsolute(inside))
      throw new CliError(
        `${path.relative(root, at)} is a symbolic link to ${resolved}, outside the project folder; the platform writes only inside ${root}. Replace the link with a file or folder of its own.`,
      );
  }
}
