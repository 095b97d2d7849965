import type { Plugin } from "esbuild";
import path from "node:path";
import { RUNTIME_DIR } from "../repoPaths.ts";

/** The build error for node:sqlite in a worker build: stated once, used by the guard and the tests. */
export const NATIVE_SQLITE_MESSAGE =
  'The native SQLite addon must not be imported in worker builds: `platform/node` (node:sqlite) runs only in a Node process. Use subpath imports: import from "platform" in worker code and from "platform/node" only in Node-only files.';

const FORBIDDEN_SPECIFIERS = /^(platform\/node(\/.*)?|node:sqlite|sqlite|better-sqlite3|sqlite3|bun:sqlite)$/;
const NODE_BACKEND_DIR = path.join(RUNTIME_DIR, "node") + path.sep;

/** Fails a worker build that would pull the Node SQLite store in, whichever way it is reached. */
export function nativeSqliteGuard(): Plugin {
  return {
    name: "platform-native-sqlite-guard",
    setup(build) {
      build.onResolve({ filter: FORBIDDEN_SPECIFIERS }, (args) => ({
        errors: [{ text: `${NATIVE_SQLITE_MESSAGE} (imported "${args.path}" from ${args.importer || "the entry"})` }],
      }));
      build.onResolve({ filter: /\.node$/ }, (args) => ({
        errors: [{ text: `${NATIVE_SQLITE_MESSAGE} (imported native addon "${args.path}")` }],
      }));
      build.onLoad({ filter: /.*/ }, (args) => {
        if (args.path.startsWith(NODE_BACKEND_DIR)) {
          return { errors: [{ text: `${NATIVE_SQLITE_MESSAGE} (reached ${path.relative(RUNTIME_DIR, args.path)})` }] };
        }
        return undefined;
      });
    },
  };
}
