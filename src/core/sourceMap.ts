/**
 * Reading a source map (version 3) to point positions in a bundle back at
 * the sources, where Node's `module.SourceMap` is not at hand (the API
 * worker maps the stacks of pushed projects with the map their push sent).
 * Only what a lookup needs: each generated line's segments, decoded once.
 */

export interface SourceMapJSON {
  version: number;
  sources: string[];
  mappings: string;
  sourceRoot?: string;
}

/** A generated line's segments: [generatedColumn, sourceIndex, originalLine, originalColumn], 0-based, by column. */
type Segment = [number, number, number, number];

export interface DecodedSourceMap {
  sources: string[];
  lines: Segment[][];
}

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const DIGIT = new Map([...BASE64].map((char, i) => [char, i]));

/** Whether `value` has the shape of a version-3 source map (checked before it is stored). */
export function isSourceMapJSON(value: unknown): value is SourceMapJSON {
  const map = value as Partial<SourceMapJSON> | null;
  return (
    typeof map === "object" &&
    map !== null &&
    map.version === 3 &&
    Array.isArray(map.sources) &&
    map.sources.every((source) => typeof source === "string") &&
    typeof map.mappings === "string"
  );
}

/** Decodes the mappings' Base64 VLQs; a malformed segment ends its line there (positions after it stay unmapped). */
export function decodeSourceMap(map: SourceMapJSON): DecodedSourceMap {
  const lines: Segment[][] = [];
  let source = 0;
  let originalLine = 0;
  let originalColumn = 0;
  for (const line of map.mappings.split(";")) {
    const segments: Segment[] = [];
    let column = 0;
    for (const text of line.split(",")) {
      if (!text) continue;
      const fields = decodeVlqs(text);
      if (!fields || fields.length < 1) break;
      column += fields[0]!;
      if (fields.length < 4) continue; // a segment with no source says nothing to map to
      source += fields[1]!;
      originalLine += fields[2]!;
      originalColumn += fields[3]!;
      segments.push([column, source, originalLine, originalColumn]);
    }
    segments.sort((a, b) => a[0] - b[0]);
    lines.push(segments);
  }
  const root = map.sourceRoot ? map.sourceRoot.replace(/\/?$/, "/") : "";
  return { sources: map.sources.map((s) => root + s), lines };
}

function decodeVlqs(text: string): number[] | null {
  const values: number[] = [];
  let value = 0;
  let shift = 0;
  for (const char of text) {
    const digit = DIGIT.get(char);
    if (digit === undefined) return null;
    value += (digit & 31) << shift;
    if (digit & 32) {
      shift += 5;
      continue;
    }
    values.push(value & 1 ? -(value >>> 1) : value >>> 1);
    value = 0;
    shift = 0;
  }
  return shift === 0 ? values : null;
}

/**
 * `src/index.ts:6:9` for a 1-based position in the bundle: the segment that
 * covers it on the same line (nothing past what the map says); null when
 * the map does not cover it.
 */
export function originalLocation(map: DecodedSourceMap, line: number, column: number): string | null {
  const segments = map.lines[line - 1];
  if (!segments?.length) return null;
  let low = 0;
  let high = segments.length - 1;
  let found: Segment | undefined;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const segment = segments[middle]!;
    if (segment[0] <= column - 1) {
      found = segment;
      low = middle + 1;
    } else high = middle - 1;
  }
  if (!found) return null;
  const source = map.sources[found[1]];
  return source === undefined ? null : `${source}:${found[2] + 1}:${found[3] + 1}`;
}

/**
 * `text` (a stack, a log line) with every position in the bundle module
 * `bundleName` (by its bare name, a path or a file URL ending in it)
 * replaced by its source position; positions the map does not cover stay.
 */
export function mapStackPositions(text: string, map: DecodedSourceMap, bundleName: string): string {
  const name = bundleName.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const position = new RegExp(`(?<![\\w.-])(?:[\\w+.-]+:\\/\\/)?(?:[^\\s()'"]*\\/)?${name}:(\\d+):(\\d+)`, "g");
  return text.replace(
    position,
    (whole, line: string, column: string) => originalLocation(map, Number(line), Number(column)) ?? whole,
  );
}
