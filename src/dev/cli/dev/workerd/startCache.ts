import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { START_CACHE_DIR } from "../../repoPaths.ts";

/**
 * What `platform dev` and `platform up` would otherwise work out again on
 * every start from files that rarely change: the platform's workers as
 * wrangler reads their configs (importing wrangler alone takes over a second)
 * and the workers' bundles. An entry is named by a hash of everything it was
 * made from, so a changed input misses and is made again; it is never served
 * stale. The folder is the platform's own, beside its dependencies
 * (`node_modules/.cache/platform`), not a temp folder another user of the
 * machine could write into. A cache that cannot be read or written is passed
 * by: a start never fails on it.
 */
export interface StartCache {
  /** The entry's text, or null when there is none (or it cannot be read). */
  read(key: string): string | null;
  /** Stores the entry whole or not at all (a start beside this one never reads half of it). */
  write(key: string, text: string): void;
}

export function startCache(dir: string = START_CACHE_DIR): StartCache {
  const file = (key: string) => path.join(dir, key);
  return {
    read(key) {
      try {
        return readFileSync(file(key), "utf8");
      } catch {
        return null;
      }
    },
    write(key, text) {
      const partial = `${file(key)}.${randomBytes(6).toString("hex")}.partial`;
      try {
        mkdirSync(dir, { recursive: true });
      } catch {
        return;
      }
      try {
        writeFileSync(partial, text);
        renameSync(partial, file(key));
      } catch {
        rmSync(partial, { force: true });
      }
    },
  };
}

/** A key for an entry made from `parts` (each length-prefixed, so no two lists of parts share a key). */
export function cacheKey(kind: string, parts: readonly (string | Uint8Array)[]): string {
  const hash = createHash("sha256");
  for (const part of parts) {
    const bytes = typeof part === "string" ? Buffer.from(part) : part;
    hash.update(`${bytes.length}:`).update(bytes);
  }
  return `${kind}-${hash.digest("hex").slice(0, 32)}`;
}

/** The content hash of a file, or null when it cannot be read. */
export function fileHash(filePath: string): string | null {
  try {
    return createHash("sha256").update(readFileSync(filePath)).digest("hex");
  } catch {
    return null;
  }
}
