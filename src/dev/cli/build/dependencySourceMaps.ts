import type { Plugin } from "esbuild";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";

/**
 * A dev bundle's source map follows each dependency's own map, so a stack
 * can name the TypeScript a package was written in. Some packages ship maps
 * whose sources they do not ship (itty-router 6.0.0 named `../src/src/Router.ts`,
 * which would show as `node_modules/src/src/Router.ts`, a file nowhere on
 * disk). Such a dependency is bundled without its map: its frames then name
 * the JavaScript file that is really there, `node_modules/itty-router/index.mjs`.
 */

const MAP_COMMENT = /\n\/\/# sourceMappingURL=([^\s'"]+)\s*$/;

/** True when every source the map names is a file on disk (a map that cannot be read counts as broken). */
async function mapSourcesExist(file: string, url: string): Promise<boolean> {
  if (url.startsWith("data:")) return false;
  const mapPath = path.resolve(path.dirname(file), decodeURIComponent(url));
  try {
    const map = JSON.parse(await readFile(mapPath, "utf8")) as { sources?: unknown; sourceRoot?: unknown };
    if (!Array.isArray(map.sources)) return false;
    const root = path.resolve(path.dirname(mapPath), typeof map.sourceRoot === "string" ? map.sourceRoot : "");
    return map.sources.every((source) => typeof source === "string" && existsSync(path.resolve(root, source)));
  } catch {
    return false;
  }
}

export function dependencySourceMaps(): Plugin {
  const checked = new Map<string, boolean>();
  return {
    name: "platform-dependency-source-maps",
    setup(build) {
      build.onLoad({ filter: /[\\/]node_modules[\\/].*\.[cm]?js$/ }, async (args) => {
        const text = await readFile(args.path, "utf8");
        const comment = MAP_COMMENT.exec(text);
        if (!comment) return undefined;
        const key = `${args.path}\n${comment[1]}`;
        let usable = checked.get(key);
        if (usable === undefined) {
          usable = await mapSourcesExist(args.path, comment[1]!);
          checked.set(key, usable);
        }
        return usable ? undefined : { contents: text.slice(0, comment.index + 1), loader: "js" };
      });
    },
  };
}
