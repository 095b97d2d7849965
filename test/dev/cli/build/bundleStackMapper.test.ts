import * as esbuild from "esbuild";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
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
  const { readFileSync } = await import("node:fs");
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
