import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CLI_DEPENDENCIES, packageManifest } from "#src/dev/package/packageManifest.ts";
import { REPO_ROOT } from "#src/dev/cli/repoPaths.ts";

const repository = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));
const manifest = packageManifest(repository) as Record<string, any>;

describe("packageManifest: the installable package's package.json", () => {
  it("is the repository's name and version, an ES module package with the platform command", () => {
    expect(manifest).toMatchObject({
      name: "platform",
      version: repository.version,
      type: "module",
      bin: { platform: "bin/platform.js" },
      sideEffects: false,
    });
    expect(manifest.private).toBeUndefined();
  });

  it("depends on the runtime's dependencies and the CLI's, at the repository's versions", () => {
    const expected = [...Object.keys(repository.dependencies), ...CLI_DEPENDENCIES].sort();
    expect(Object.keys(manifest.dependencies)).toEqual(expected);
    for (const name of expected)
      expect(manifest.dependencies[name]).toBe(repository.dependencies[name] ?? repository.devDependencies[name]);
    expect(manifest.dependencies.node).toMatch(/^22\./);
    expect(Object.keys(manifest.dependencies)).toEqual(expect.arrayContaining(["esbuild", "miniflare", "wrangler"]));
    // The repository's own tools stay out.
    for (const tool of ["vitest", "typescript", "@biomejs/biome", "dependency-cruiser", "playwright-core"])
      expect(manifest.dependencies).not.toHaveProperty(tool);
    expect(manifest.projectTools).toEqual({
      typescript: repository.devDependencies.typescript,
      vitest: repository.devDependencies.vitest,
    });
  });

  // npm warns EBADENGINE for every installed package whose engines refuse the Node it runs on (often 20). The
  // package installs on 20 and runs its CLI under the Node 22 it brings; of its dependencies only Miniflare and
  // wrangler need 22 (every published version does), so nothing else of ours may add to those warnings.
  it("installs on Node 20; of its dependencies only miniflare and wrangler need Node 22", () => {
    /** Whether an `engines.node` range admits Node 20: one of its `||` alternatives starts at major 20 or lower. */
    const admitsNode20 = (range: string | undefined) =>
      range === undefined || range.split("||").some((part) => Number(/\d+/.exec(part)?.[0] ?? 0) <= 20);
    expect(admitsNode20(manifest.engines.node)).toBe(true);
    const needNode22 = Object.keys(manifest.dependencies).filter((name) => {
      const installed = JSON.parse(readFileSync(path.join(REPO_ROOT, "node_modules", name, "package.json"), "utf8"));
      return !admitsNode20(installed.engines?.node);
    });
    expect(needNode22).toEqual(["miniflare", "wrangler"]);
  });

  // Worker bundlers ask for workerd/worker/browser, Node for node; the test kit and the Node host are Node's only.
  it.each([
    [".", "workerd", "./dist/runtime/index.js"],
    [".", "node", "./dist/runtime/index.js"],
    [".", "types", "./dist/runtime/index.d.ts"],
    ["./testing", "node", "./dist/runtime/testing/index.js"],
    ["./testing", "workerd", undefined],
    ["./testing", "default", undefined],
    ["./node", "node", "./dist/runtime/node/index.js"],
    ["./node", "types", "./dist/runtime/node/index.d.ts"],
    ["./node", "browser", undefined],
  ])("exports[%s][%s] → %s", (entry, condition, target) => {
    expect(manifest.exports[entry][condition]).toBe(target);
  });

  it("refuses a repository that names no version of something the package needs", () => {
    expect(() =>
      packageManifest({ ...repository, devDependencies: { ...repository.devDependencies, miniflare: undefined } }),
    ).toThrow(/no version of "miniflare"/);
  });
});
