import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type ProjectWatcher, watchProjectTree } from "#src/dev/cli/dev/watch/projectWatcher.ts";

const IGNORED = /(^|[\\/])(\.platform|node_modules)([\\/]|$)/;

let dir: string;
let watcher: ProjectWatcher | undefined;
afterEach(() => {
  watcher?.close();
  rmSync(dir, { recursive: true, force: true });
});

function start(): string[] {
  dir = mkdtempSync(path.join(tmpdir(), "project-watcher-"));
  mkdirSync(path.join(dir, "src"));
  mkdirSync(path.join(dir, ".platform"));
  writeFileSync(path.join(dir, "src/index.ts"), "v0");
  const seen: string[] = [];
  watcher = watchProjectTree(dir, IGNORED, (file) => seen.push(file));
  return seen;
}

/** Saves as `sed -i`, vim's backupcopy and JetBrains' safe write do: a new file renamed over the old one. */
function saveByRename(file: string, text: string) {
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.tmp`);
  writeFileSync(temporary, text);
  renameSync(temporary, file);
}

describe("watchProjectTree", () => {
  it("sees each of three rename-style saves in a row of the same file, and an in-place save after them", async () => {
    const seen = start();
    const index = path.join(dir, "src/index.ts");
    for (let save = 1; save <= 3; save++) {
      seen.length = 0;
      saveByRename(index, `v${save}`);
      await expect.poll(() => seen, { timeout: 5_000 }).toContain(path.join("src", "index.ts"));
    }
    seen.length = 0;
    writeFileSync(index, "in place");
    await expect.poll(() => seen, { timeout: 5_000 }).toContain(path.join("src", "index.ts"));
  });

  it("watches folders created after it started, and ignores what the pattern names", async () => {
    const seen = start();
    mkdirSync(path.join(dir, "src/lib"));
    await expect.poll(() => seen, { timeout: 5_000 }).toContain(path.join("src", "lib"));
    // The new folder's watch is set up when its creation is seen; a file in it is seen from then on.
    writeFileSync(path.join(dir, "src/lib/util.ts"), "x");
    await expect.poll(() => seen, { timeout: 5_000 }).toContain(path.join("src", "lib", "util.ts"));
    writeFileSync(path.join(dir, ".platform/build.js"), "ignored");
    writeFileSync(path.join(dir, "src/after.ts"), "x");
    await expect.poll(() => seen, { timeout: 5_000 }).toContain(path.join("src", "after.ts"));
    expect(seen.filter((file) => file.startsWith(".platform"))).toEqual([]);
  });

  it("outlives a folder removed under it", async () => {
    const seen = start();
    mkdirSync(path.join(dir, "src/gone"));
    await expect.poll(() => seen, { timeout: 5_000 }).toContain(path.join("src", "gone"));
    rmSync(path.join(dir, "src/gone"), { recursive: true });
    seen.length = 0;
    saveByRename(path.join(dir, "src/index.ts"), "still watched");
    await expect.poll(() => seen, { timeout: 5_000 }).toContain(path.join("src", "index.ts"));
  });
});
