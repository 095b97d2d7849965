import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isProjectFolder, projectFolder } from "#src/dev/cli/projectFolder.ts";
import { DEMO_PROJECT_DIR, REPO_ROOT } from "#src/dev/cli/repoPaths.ts";

const root = mkdtempSync(path.join(tmpdir(), "platform-project-folder-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A folder under the temporary root with these files. */
function folder(name: string, files: Record<string, string>): string {
  const dir = path.join(root, name);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  mkdirSync(dir, { recursive: true });
  return dir;
}

const dependsOnPlatform = folder("app", {
  "package.json": JSON.stringify({ dependencies: { platform: "file:x.tgz" } }),
});
const devDependency = folder("dev-dep", { "package.json": JSON.stringify({ devDependencies: { platform: "1.0.0" } }) });
const sourceOnly = folder("src-only", { "src/index.ts": "export default {};" });
const unrelated = folder("other", { "package.json": JSON.stringify({ dependencies: { react: "19" } }) });
const thePackage = folder("pkg", {
  "package.json": JSON.stringify({ name: "platform", dependencies: { platform: "1" } }),
});
const brokenManifest = folder("broken", { "package.json": "{ not json" });

describe("projectFolder: what a command without a directory acts on", () => {
  it.each([
    ["a folder whose package.json depends on platform", dependsOnPlatform, undefined, dependsOnPlatform],
    ["a folder that has platform as a dev dependency", devDependency, undefined, devDependency],
    ["a folder with src/index.ts", sourceOnly, undefined, sourceOnly],
    ["this repository's root, which has no project of its own: the demo", REPO_ROOT, undefined, DEMO_PROJECT_DIR],
    ["any other folder: itself (commands then say there is no project)", unrelated, undefined, unrelated],
    ["a directory given: that one, relative to the current folder", unrelated, "../app", dependsOnPlatform],
    ["a directory given in the repository's root: that one, not the demo", REPO_ROOT, ".", REPO_ROOT],
  ])("%s", (_case, cwd, dir, expected) => {
    expect(projectFolder(dir, cwd)).toBe(expected);
  });
});

describe("isProjectFolder", () => {
  it.each([
    [dependsOnPlatform, true],
    [devDependency, true],
    [sourceOnly, true],
    [unrelated, false],
    [thePackage, false],
    [brokenManifest, false],
    [path.join(root, "missing"), false],
  ])("%s → %s", (dir, expected) => {
    expect(isProjectFolder(dir)).toBe(expected);
  });
});
