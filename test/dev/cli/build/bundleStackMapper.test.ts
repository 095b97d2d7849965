import * as esbuild from "esbuild";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mapBundleLocations, sourceLocation, type MappedBundle } from "#src/dev/cli/build/bundleStackMapper.ts";

const projectDir = mkdtempSync(path.join(tmpdir(), "platform-stack-map-"));
afterAll(() => rmSync(projectDir, { recursive: true, force: true }));

const SOURCE = `export function explode(): never {
  throw new Error("boom");
}
`;
let bundle: MappedBundle;
/** The bundle position of `throw` (1-based line and column), read from the bundle itself. */
let throwAt: { line: number; column: number };

beforeAll(async () => {
  mkdirSync(path.join(projectDir, "src"));
  writeFileSync(path.join(projectDir, "src/index.ts"), SOURCE);
  const bundlePath = path.join(projectDir, ".platform/build/worker.js");
  await esbuild.build({
    entryPoints: [path.join(projectDir, "src/index.ts")],
    bundle: true,
    format: "esm",
    outfile: bundlePath,
    sourcemap: "linked",
    sourcesContent: false,
    logLevel: "silent",
    absWorkingDir: projectDir,
  });
  bundle = { bundlePath, projectDir };
  const lines = readFileSync(bundlePath, "utf8").split("\n");
  const line = lines.findIndex((l) => l.includes("throw new Error"));
  throwAt = { line: line + 1, column: lines[line]!.indexOf("throw") + 1 };
});

describe("mapBundleLocations: positions in the dev bundle become the project's source positions", () => {
  const cases: [label: string, text: () => string, expected: () => string][] = [
    [
      "a workerd frame (file URL)",
      () => `    at explode (${pathToFileURL(bundle.bundlePath).href}:${throwAt.line}:${throwAt.column})`,
      () => "    at explode (src/index.ts:2:3)",
    ],
    ["a plain path", () => `at ${bundle.bundlePath}:${throwAt.line}:${throwAt.column}`, () => "at src/index.ts:2:3"],
    [
      "workerd's bare module name (a top-level throw)",
      () => `Uncaught Error: boom\n  at worker.js:${throwAt.line}:${throwAt.column}`,
      () => "Uncaught Error: boom\n  at src/index.ts:2:3",
    ],
    [
      "a file of the project that is also called worker.js stays",
      () => `at src/worker.js:${throwAt.line}:${throwAt.column}`,
      () => `at src/worker.js:${throwAt.line}:${throwAt.column}`,
    ],
    ["a position past the end of the bundle stays", () => "at worker.js:9999:1", () => "at worker.js:9999:1"],
    ["text without positions stays", () => "GET / → 200 in 3 ms", () => "GET / → 200 in 3 ms"],
  ];
  it.each(cases)("%s", (_label, text, expected) => {
    expect(mapBundleLocations(text(), bundle)).toBe(expected());
  });

  it("a bundle without a map (a push build) is left alone", () => {
    const unmapped = { bundlePath: path.join(projectDir, "elsewhere/worker.js"), projectDir };
    expect(sourceLocation(unmapped, 1, 1)).toBeNull();
    expect(mapBundleLocations("at worker.js:1:1", unmapped)).toBe("at worker.js:1:1");
  });

  it("a source outside the project is named by its absolute path", () => {
    const other = { bundlePath: bundle.bundlePath, projectDir: path.join(projectDir, "elsewhere") };
    expect(sourceLocation(other, throwAt.line, throwAt.column)).toBe(path.join(projectDir, "src/index.ts") + ":2:3");
  });
});

describe("a dev build's frames in dependencies name files that exist", () => {
  // Two dependencies that throw: one ships a map naming sources it does not ship (as itty-router does),
  // one ships its TypeScript beside its map.
  const dependencies: Record<string, string> = {
    "node_modules/broken-map/package.json": '{ "name": "broken-map", "type": "module", "main": "index.mjs" }',
    "node_modules/broken-map/index.mjs":
      'export function fail() {\n  throw new Error("broken");\n}\n//# sourceMappingURL=index.mjs.map\n',
    "node_modules/broken-map/index.mjs.map": JSON.stringify({
      version: 3,
      sources: ["../src/src/index.ts"],
      names: [],
      mappings: "AAAA;AACE;AACF",
    }),
    "node_modules/good-map/package.json": '{ "name": "good-map", "type": "module", "main": "dist/index.js" }',
    "node_modules/good-map/src/index.ts": 'export function fail(): never {\n  throw new Error("good");\n}\n',
    "node_modules/good-map/dist/index.js":
      'export function fail() {\n  throw new Error("good");\n}\n//# sourceMappingURL=index.js.map\n',
    "node_modules/good-map/dist/index.js.map": JSON.stringify({
      version: 3,
      sources: ["../src/index.ts"],
      names: [],
      mappings: "AAAA;AACE;AACF",
    }),
    "src/index.ts":
      'import { fail as broken } from "broken-map";\nimport { fail as good } from "good-map";\nexport default { fetch: () => (Math.random() > 2 ? broken() : good()) };\n',
  };

  it.each([
    [
      "a map naming sources that are not there: the dependency's own JavaScript",
      "broken",
      "node_modules/broken-map/index.mjs:2:3",
    ],
    ["a map whose sources are there: the dependency's TypeScript", "good", "node_modules/good-map/src/index.ts:2:3"],
  ])("%s", async (_label, message, expected) => {
    const dir = mkdtempSync(path.join(tmpdir(), "platform-dependency-maps-"));
    try {
      for (const [file, text] of Object.entries(dependencies)) {
        mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        writeFileSync(path.join(dir, file), text);
      }
      const { buildProject } = await import("#src/dev/cli/build/buildProject.ts");
      const built = await buildProject(dir, path.join(dir, ".platform/build"), { sourceMap: true });
      const lines = readFileSync(built.bundlePath, "utf8").split("\n");
      const line = lines.findIndex((l) => l.includes(`new Error("${message}")`));
      const location = sourceLocation(
        { bundlePath: built.bundlePath, projectDir: dir },
        line + 1,
        lines[line]!.indexOf("throw") + 1,
      );
      expect(location).toBe(expected);
      expect(existsSync(path.join(dir, location!.replace(/:\d+:\d+$/, "")))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
