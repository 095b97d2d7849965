import path from "node:path";

/** Files a build reads that are not modules of the bundle: the project's variables and how its code resolves. */
const READ_BESIDE_THE_BUNDLE = new Set([".dev.vars", "package.json", "tsconfig.json"]);

/**
 * Whether a change to `changed` (relative to the project folder) calls for a
 * rebuild: when it is one of the files the last build read (esbuild's
 * metafile inputs, `ProjectBuild.inputs`) or one it reads beside them; a
 * test, a NOTES.md or a file nothing imports yet does not. With no build to
 * go by (none yet, or the last attempt failed, when any new file may be the
 * missing import that fixes it), every change does.
 */
export function triggersRebuild(
  projectDir: string,
  changed: string,
  last: { inputs: readonly string[] | null; failed: boolean },
): boolean {
  if (last.failed || last.inputs === null) return true;
  if (READ_BESIDE_THE_BUNDLE.has(changed.split(path.sep).join("/"))) return true;
  return last.inputs.includes(path.resolve(projectDir, changed));
}
