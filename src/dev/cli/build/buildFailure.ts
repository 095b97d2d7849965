import * as esbuild from "esbuild";
import path from "node:path";
import { PlatformError } from "../../../core/errors.ts";
import { RUNTIME_DIR } from "../repoPaths.ts";

/**
 * esbuild's failures as a person reads them: each message with its code frame
 * (file:line:col, the line, a caret), file names relative to the project, and
 * this repository's runtime called by the name user code imports, `platform`.
 */

const PLATFORM_INDEX = path.join(RUNTIME_DIR, "index.ts");
const MISSING_EXPORT = /^No matching export in "([^"]+)" for import "([^"]+)"$/;
const UNDEFINED_IMPORT = /^Import "([^"]+)" will always be undefined because there is no matching export in "([^"]+)"$/;

function isPlatformIndex(projectDir: string, file: string): boolean {
  return path.resolve(projectDir, file) === PLATFORM_INDEX;
}

/** `"platform" has no export named "workflo"`, for the two ways esbuild says a runtime import is missing. */
function platformMissingExport(projectDir: string, message: esbuild.Message): string | null {
  const missing = MISSING_EXPORT.exec(message.text);
  if (missing && isPlatformIndex(projectDir, missing[1]!)) return missing[2]!;
  const undefinedImport = UNDEFINED_IMPORT.exec(message.text);
  if (undefinedImport && isPlatformIndex(projectDir, undefinedImport[2]!)) return undefinedImport[1]!;
  return null;
}

/** What a build says about an import the platform does not export (a missing `export default` included). */
export function missingPlatformExportText(module: string, name: string, suggestion?: string): string {
  if (name === "default")
    return `"${module}" has no default export; import its names: import { workflow } from "${module}"`;
  return `"${module}" has no export named "${name}"${suggestion ? ` (did you mean "${suggestion}"?)` : ""}`;
}

/** The message with the runtime's path replaced by `platform`, and "did you mean" kept as a note. */
function readable(projectDir: string, message: esbuild.Message): esbuild.Message {
  // The platform's own build plugins speak for the build: no "[plugin platform-…]" after their messages.
  if (message.pluginName.startsWith("platform-")) return { ...message, pluginName: "" };
  const name = platformMissingExport(projectDir, message);
  if (name === null) return message;
  const suggestion = message.location?.suggestion;
  return {
    ...message,
    text: missingPlatformExportText("platform", name, suggestion || undefined),
    // The notes point into the runtime's own source; the suggestion already says what they say.
    notes: [],
  };
}

/**
 * The warnings that must fail a project's build: reading a name `platform`
 * does not export (`platform.workflo`) is `undefined` at run time, never what
 * the author meant.
 */
export function fatalWarnings(projectDir: string, warnings: esbuild.Message[]): esbuild.Message[] {
  return warnings.filter((warning) => platformMissingExport(projectDir, warning) !== null);
}

/** A `build_failed` error whose message is every esbuild error with its code frame. */
export async function buildFailure(projectDir: string, errors: esbuild.Message[]): Promise<PlatformError> {
  const formatted = await esbuild.formatMessages(
    errors.map((error) => readable(projectDir, error)),
    { kind: "error", color: false, terminalWidth: 100 },
  );
  // esbuild's "✘ [ERROR] " marker says nothing the caller's "Build failed" does not.
  const text = formatted.map((message) => message.replace(/^\S+ \[ERROR\] /, "").trimEnd()).join("\n\n");
  return new PlatformError("build_failed", text);
}

/** What `esbuild.build` threw, as a `build_failed` error (with code frames when it reports messages). */
export async function buildFailureFrom(projectDir: string, thrown: unknown): Promise<PlatformError> {
  const errors = (thrown as { errors?: esbuild.Message[] }).errors;
  if (Array.isArray(errors) && errors.length) return buildFailure(projectDir, errors);
  if (thrown instanceof PlatformError) return thrown;
  return new PlatformError("build_failed", thrown instanceof Error ? thrown.message : String(thrown));
}
