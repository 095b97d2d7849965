import { readFileSync } from "node:fs";
import path from "node:path";
import type { SourceMapJSON } from "../../../core/sourceMap.ts";
import type { ProjectBuild } from "./buildProject.ts";

/**
 * A build's source map as the platform keeps it (to map the stacks it
 * shows): its sources named as `platform dev` names them, relative to the
 * project when inside it (`src/index.ts`), else by their full path; no
 * sources' content and no names (the platform needs positions only). Null
 * when the build wrote no map.
 */
export function portableSourceMap(build: Pick<ProjectBuild, "bundlePath" | "projectDir">): SourceMapJSON | null {
  let map: SourceMapJSON;
  try {
    map = JSON.parse(readFileSync(`${build.bundlePath}.map`, "utf8")) as SourceMapJSON;
  } catch {
    return null;
  }
  const mapDir = path.dirname(build.bundlePath);
  const sources = map.sources.map((source) => {
    const file = path.resolve(mapDir, (map.sourceRoot ?? "") + source);
    const relative = path.relative(build.projectDir, file);
    return relative.startsWith("..") || path.isAbsolute(relative) ? file : relative.split(path.sep).join("/");
  });
  return { version: 3, sources, mappings: map.mappings };
}
