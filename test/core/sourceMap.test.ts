import * as esbuild from "esbuild";
import { SourceMap, type SourceMapPayload } from "node:module";
import { describe, expect, it } from "vitest";
import {
  decodeSourceMap,
  isSourceMapJSON,
  mapStackPositions,
  originalLocation,
  type SourceMapJSON,
} from "#src/core/sourceMap.ts";

const SOURCE = `import { helper } from "./helper";

export function explode(): never {
  throw new Error("boom");
}

export default {
  fetch() {
    return helper() ? explode() : new Response("ok");
  },
};
`;
const HELPER = `export const helper = () =>
  Math.random() > 2;
`;

async function bundle(): Promise<{ code: string; map: SourceMapJSON }> {
  const result = await esbuild.build({
    stdin: { contents: SOURCE, loader: "ts", sourcefile: "src/index.ts", resolveDir: "/virtual" },
    bundle: true,
    write: false,
    format: "esm",
    sourcemap: "external",
    outfile: "/virtual/out/worker.js",
    plugins: [
      {
        name: "virtual",
        setup(build) {
          build.onResolve({ filter: /^\.\/helper$/ }, () => ({ path: "/virtual/src/helper.ts", namespace: "v" }));
          build.onLoad({ filter: /.*/, namespace: "v" }, () => ({ contents: HELPER, loader: "ts" }));
        },
      },
    ],
  });
  const file = (suffix: string) => result.outputFiles.find((f) => f.path.endsWith(suffix))!.text;
  return { code: file("worker.js"), map: JSON.parse(file("worker.js.map")) as SourceMapJSON };
}

describe("source maps without Node", () => {
  it("finds what Node's own SourceMap finds, position by position", async () => {
    const { code, map } = await bundle();
    const decoded = decodeSourceMap(map);
    const node = new SourceMap(map as unknown as SourceMapPayload);
    const lines = code.split("\n");
    let compared = 0;
    for (const [i, text] of lines.entries()) {
      for (let column = 1; column <= text.length; column++) {
        const entry = node.findEntry(i, column - 1) as {
          generatedLine?: number;
          originalSource?: string;
          originalLine?: number;
          originalColumn?: number;
        };
        const expected =
          entry.generatedLine === i && entry.originalSource
            ? `${entry.originalSource}:${entry.originalLine! + 1}:${entry.originalColumn! + 1}`
            : null;
        const found = originalLocation(decoded, i + 1, column);
        // Node resolves sources against the map's own URL; compare their file names.
        expect(found?.split("/").pop() ?? null, `${i + 1}:${column}`).toBe(expected?.split("/").pop() ?? null);
        if (expected) compared++;
      }
    }
    expect(compared).toBeGreaterThan(50);
  });

  it("maps a stack's positions by the bundle's bare name, path or file URL, and leaves the rest", async () => {
    const { code, map } = await bundle();
    const decoded = decodeSourceMap(map);
    const line = code.split("\n").findIndex((l) => l.includes('new Error("boom")')) + 1;
    const column = code.split("\n")[line - 1]!.indexOf("throw") + 1;
    const at = originalLocation(decoded, line, column);
    expect(at).toMatch(/src\/index\.ts:4:3$/);
    const stack = [
      "Error: boom",
      `    at explode (worker.js:${line}:${column})`,
      `    at Object.fetch (file:///state/scripts/proj-shop/modules/worker.js:${line}:${column})`,
      `    at /srv/build/worker.js:${line}:${column}`,
      "    at other (not-worker.js:1:1)",
      "    at node_modules/x/index.js:3:4",
    ].join("\n");
    const mapped = mapStackPositions(stack, decoded, "worker.js").split("\n");
    expect(mapped[1]).toBe(`    at explode (${at})`);
    expect(mapped[2]).toBe(`    at Object.fetch (${at})`);
    expect(mapped[3]).toBe(`    at ${at}`);
    expect(mapped[4]).toBe("    at other (not-worker.js:1:1)");
    expect(mapped[5]).toBe("    at node_modules/x/index.js:3:4");
    // A position past the map's lines stays as it was.
    expect(mapStackPositions("at worker.js:99999:1", decoded, "worker.js")).toBe("at worker.js:99999:1");
  });

  it.each([
    [{ version: 3, sources: ["a.ts"], mappings: "AAAA" }, true],
    [{ version: 2, sources: [], mappings: "" }, false],
    [{ version: 3, sources: [1], mappings: "" }, false],
    [{ version: 3, sources: [] }, false],
    ["nope", false],
    [null, false],
  ])("%j is a source map: %s", (value, ok) => {
    expect(isSourceMapJSON(value)).toBe(ok);
  });

  it("a malformed segment leaves its line unmapped instead of throwing", () => {
    const decoded = decodeSourceMap({ version: 3, sources: ["a.ts"], mappings: "AAAA,!!;AACA" });
    expect(originalLocation(decoded, 1, 1)).toBe("a.ts:1:1");
    expect(originalLocation(decoded, 2, 1)).toBe("a.ts:2:1");
  });
});
