import { readFileSync, statSync } from "node:fs";
import { SourceMap, type SourceMapping, type SourceMapPayload } from "node:module";
import path from "node:path";

/**
 * Stack traces of a `platform dev` bundle, pointed back at the project's own
 * files: `file:///…/.platform/build/worker.js:38:9` (or workerd's bare
 * `worker.js:37:19` for a top-level throw) becomes `src/index.ts:6:9`. The map
 * is the `<bundle>.map` a dev build writes (buildProject's `sourceMap`), read
 * with Node's own `SourceMap` and re-read whenever the bundle is rebuilt.
 * Positions the map does not cover stay as they were.
 */

export interface MappedBundle {
  bundlePath: string;
  projectDir: string;
}

const maps = new Map<string, { mtimeMs: number; map: SourceMap | null }>();

function sourceMapOf(bundlePath: string): SourceMap | null {
  const mapPath = `${bundlePath}.map`;
  let mtimeMs: number;
  try {
    mtimeMs = statSync(mapPath).mtimeMs;
  } catch {
    return null;
  }
  const cached = maps.get(mapPath);
  if (cached?.mtimeMs === mtimeMs) return cached.map;
  let map: SourceMap | null = null;
  try {
    map = new SourceMap(JSON.parse(readFileSync(mapPath, "utf8")) as SourceMapPayload);
  } catch {
    map = null;
  }
  maps.set(mapPath, { mtimeMs, map });
  return map;
}

/**
 * `src/index.ts:6:9` for a 1-based bundle position: the mapping segment that
 * covers it on the same line (no extrapolation past what the map says),
 * named relative to the project when the source is inside it.
 */
export function sourceLocation(bundle: MappedBundle, line: number, column: number): string | null {
  const map = sourceMapOf(bundle.bundlePath);
  if (!map) return null;
  const entry = map.findEntry(line - 1, column - 1) as Partial<SourceMapping>;
  if (entry.generatedLine !== line - 1 || !entry.originalSource || entry.originalLine === undefined) return null;
  const file = path.resolve(path.dirname(bundle.bundlePath), entry.originalSource);
  const relative = path.relative(bundle.projectDir, file);
  const shown = relative.startsWith("..") || path.isAbsolute(relative) ? file : relative;
  return `${shown}:${entry.originalLine + 1}:${(entry.originalColumn ?? 0) + 1}`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** `text` (a stack, a log line) with every position in the bundle replaced by its source position. */
export function mapBundleLocations(text: string, bundle: MappedBundle): string {
  const full = escapeRegExp(bundle.bundlePath);
  const base = escapeRegExp(path.basename(bundle.bundlePath));
  // The bundle by its file URL or path, or by its bare name (workerd names the module so at top level).
  const location = new RegExp(`(?:file://)?(?:${full}|(?<![\\w./-])${base}):(\\d+):(\\d+)`, "g");
  return text.replace(
    location,
    (whole, line: string, column: string) => sourceLocation(bundle, Number(line), Number(column)) ?? whole,
  );
}
