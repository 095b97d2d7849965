import * as esbuild from "esbuild";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { closestName } from "../../../core/closestName.ts";
import { REPO_ROOT, RUNTIME_DIR } from "../repoPaths.ts";
import { missingPlatformExportText } from "./buildFailure.ts";

/**
 * Fails a build that imports a name `platform` (or `platform/node`) does not
 * export, used or not. TypeScript drops an import nothing uses before the
 * bundler sees it, so `import { workflo } from "platform"` would otherwise
 * build; the author meant something. Type names count as exports: `import {
 * AuthUser } from "platform"` without `type` is fine.
 */

const MODULES: Record<string, string> = {
  platform: path.join(RUNTIME_DIR, "index.ts"),
  "platform/node": path.join(RUNTIME_DIR, "node", "index.ts"),
};

const names = new Map<string, Set<string>>();

/**
 * Every name a runtime index exports, values and types. The indexes list
 * them all in `export { … } from "…"` / `export type { … } from "…"`
 * statements (one home: the index itself is the list).
 */
export function exportedNames(indexFile: string): Set<string> {
  let known = names.get(indexFile);
  if (known) return known;
  known = new Set<string>();
  const source = readFileSync(indexFile, "utf8").replace(/\/\/.*$/gm, "");
  for (const [, list] of source.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g)) {
    for (const item of list!.split(",")) {
      const name = item
        .trim()
        .replace(/^type\s+/, "")
        .split(/\s+as\s+/)
        .at(-1)!
        .trim();
      if (name) known.add(name);
    }
  }
  names.set(indexFile, known);
  return known;
}

// esbuild prints each import on one line in these forms (comments, strings and type-only imports gone).
const NAMED = /^(?:import|export)\s*(?:([\w$]+)\s*,?\s*)?(?:\{([^}]*)\})?\s*from\s*"(platform(?:\/node)?)";$/gm;

interface Offence {
  module: string;
  name: string;
}

/** The imports of `code` (one module's source) that name something their platform module does not export. */
async function offences(code: string, loader: esbuild.Loader): Promise<Offence[]> {
  if (!/["']platform(\/node)?["']/.test(code)) return [];
  let js: string;
  try {
    // verbatimModuleSyntax: every import not marked `type` stays, used or not, as the author wrote it.
    ({ code: js } = await esbuild.transform(code, {
      loader,
      format: "esm",
      tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } },
    }));
  } catch {
    return []; // A syntax error: the bundle reports it, with its code frame.
  }
  const found: Offence[] = [];
  for (const [, defaultName, list, module] of js.matchAll(NAMED)) {
    const known = exportedNames(MODULES[module!]!);
    const imported = (list ?? "")
      .split(",")
      .map((item) =>
        item
          .trim()
          .split(/\s+as\s+/)[0]!
          .trim(),
      )
      .filter(Boolean);
    if (defaultName) imported.push("default");
    for (const name of imported) if (!known.has(name)) found.push({ module: module!, name });
  }
  return found;
}

/** Where `name` is first written in an import of `module`, for the code frame. */
function locate(source: string, file: string, offence: Offence): esbuild.PartialMessage["location"] {
  const lines = source.split("\n");
  const word = new RegExp(
    `(?<![\\w$])${offence.name === "default" ? "import" : offence.name.replace(/\$/g, "\\$")}(?![\\w$])`,
  );
  const line = lines.findIndex((text) => word.test(text) && /\bimport\b|\bexport\b|[{,]/.test(text));
  if (line < 0) return { file, line: 1, column: 0, lineText: lines[0] ?? "" };
  const column = lines[line]!.search(word);
  const known = exportedNames(MODULES[offence.module]!);
  return {
    file,
    line: line + 1,
    column,
    length: offence.name === "default" ? "import".length : offence.name.length,
    lineText: lines[line]!,
    suggestion: offence.name === "default" ? undefined : closestName(offence.name, known),
  };
}

const LOADERS: Record<string, esbuild.Loader> = {
  ".ts": "ts",
  ".mts": "ts",
  ".cts": "ts",
  ".tsx": "tsx",
  ".js": "js",
  ".mjs": "js",
  ".cjs": "js",
  ".jsx": "jsx",
};

export function platformImportCheck(): esbuild.Plugin {
  const platformSources = path.join(REPO_ROOT, "src") + path.sep;
  return {
    name: "platform-import-check",
    setup(build) {
      build.onLoad({ filter: /\.[cm]?[jt]sx?$/ }, async (args) => {
        if (args.path.includes(`${path.sep}node_modules${path.sep}`) || args.path.startsWith(platformSources))
          return undefined;
        const source = await readFile(args.path, "utf8");
        const found = await offences(source, LOADERS[path.extname(args.path)] ?? "ts");
        if (!found.length) return undefined;
        return {
          errors: found.map((offence) => {
            const location = locate(
              source,
              path.relative(build.initialOptions.absWorkingDir ?? "", args.path),
              offence,
            );
            return {
              text: missingPlatformExportText(offence.module, offence.name, location?.suggestion ?? undefined),
              location: { ...location, suggestion: undefined },
            };
          }),
        };
      });
    },
  };
}
