import { readFileSync, writeFileSync } from "node:fs";

/**
 * The JSON files `platform dev` keeps in `<dir>/.platform/` about itself
 * (its lock, the processes it spawned): read back by the next start, which
 * must survive one a crash left missing or half-written.
 */

/** The file's value, or null when it is missing or not JSON. */
export function readStateFile<T>(file: string): T | null {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as T;
  } catch {
    return null;
  }
}

/** Writes `value` readable by this user only; `exclusive` fails with EEXIST when the file is there already. */
export function writeStateFile(file: string, value: unknown, { exclusive = false } = {}): void {
  writeFileSync(file, JSON.stringify(value, null, 2) + "\n", { flag: exclusive ? "wx" : "w", mode: 0o600 });
}
