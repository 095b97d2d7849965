import { type FSWatcher, readdirSync, statSync, watch } from "node:fs";
import path from "node:path";

export interface ProjectWatcher {
  close(): void;
}

/**
 * Calls `onChange(relativePath)` for every file created, changed, removed or
 * renamed under `root`, skipping paths `ignored` matches (relative to root).
 *
 * It watches each folder, never a file: editors that save by writing a copy
 * and renaming it over the original (`sed -i`, vim's backupcopy, JetBrains'
 * safe write) replace the file's inode, and a watch on the file (what Node's
 * recursive `fs.watch` sets up on Linux) goes deaf after the first such save.
 * A folder's watch sees every later save of its files, however they are
 * written. Folders created later are watched as they appear; a watch whose
 * folder is gone is dropped.
 */
export function watchProjectTree(
  root: string,
  ignored: RegExp,
  onChange: (relativePath: string) => void,
): ProjectWatcher {
  const watchers = new Map<string, FSWatcher>();
  let closed = false;

  const add = (dir: string) => {
    if (closed || watchers.has(dir)) return;
    const relative = path.relative(root, dir);
    if (relative && ignored.test(relative)) return;
    let watcher: FSWatcher;
    try {
      watcher = watch(dir, (_event, name) => {
        const file = name ? path.join(dir, name.toString()) : dir;
        const changed = path.relative(root, file);
        if (changed && ignored.test(changed)) return;
        // A new folder (or one moved in) is watched with everything under it.
        if (name && isDirectory(file)) addTree(file);
        onChange(changed);
      });
    } catch {
      return; // gone already, or not readable: nothing to watch
    }
    watcher.on("error", () => drop(dir));
    watchers.set(dir, watcher);
  };
  const drop = (dir: string) => {
    watchers.get(dir)?.close();
    watchers.delete(dir);
  };
  const addTree = (dir: string) => {
    add(dir);
    let entries: string[];
    try {
      entries = readdirSync(dir, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => path.join(dir, entry.name));
    } catch {
      return;
    }
    for (const child of entries) addTree(child);
  };

  addTree(root);
  return {
    close() {
      closed = true;
      for (const dir of [...watchers.keys()]) drop(dir);
    },
  };
}

function isDirectory(file: string): boolean {
  try {
    return statSync(file).isDirectory();
  } catch {
    return false;
  }
}
