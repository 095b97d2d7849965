import path from "node:path";
import { pathToFileURL } from "node:url";
import { PlatformError } from "../../../core/errors.ts";
import { mapBundleLocations, type MappedBundle } from "./bundleStackMapper.ts";

/**
 * The project's errors as workerd logs them under `platform dev`, made
 * actionable: positions in the bundle become `src/…:line:col`, and a throw at
 * the top level of the project (which stops workerd from starting, and which
 * Miniflare reports as "likely a problem with the workerd binary or your
 * configuration") becomes the project's own error with its location.
 */

// workerd's line for an error thrown while a worker's module is evaluated: `service core:user:<script>: Uncaught <Error>…`.
const UNCAUGHT_AT_LOAD = /^service core:user:[^:\s]+: Uncaught ([\s\S]*)$/;
const RUNTIME_FAILED = /The Workers runtime failed to start/;

export class ProjectLoadErrors {
  readonly #bundle: () => MappedBundle | null;
  #lastUncaught: string | null = null;

  /** `bundle`: the project's current dev build (the one workerd runs or is about to run), or null. */
  constructor(bundle: () => MappedBundle | null) {
    this.#bundle = bundle;
  }

  /** A workerd log message as it should be printed; remembers a top-level throw for `loadFailure`. */
  present(message: string): string {
    const bundle = this.#bundle();
    const text = bundle ? mapBundleLocations(message, bundle) : message;
    const uncaught = UNCAUGHT_AT_LOAD.exec(text);
    if (uncaught) this.#lastUncaught = uncaught[1]!.trim();
    return text;
  }

  /**
   * What to report when workerd refused a build: the project's top-level
   * error, from the log line it printed (or from the runtime's stderr that
   * Miniflare quotes in its error), or else the original error.
   */
  loadFailure(error: unknown): unknown {
    const message = error instanceof Error ? error.message : String(error);
    if (!RUNTIME_FAILED.test(message)) return error;
    const uncaught = this.#fromRuntimeStderr(message) ?? this.#lastUncaught;
    this.#lastUncaught = null;
    if (!uncaught) return error;
    return new PlatformError(
      "build_failed",
      `The project threw while its module was loading (top-level code runs when the worker starts):\n  ${uncaught.replace(/\n\s*/g, "\n    ")}`,
    );
  }

  /** Miniflare appends workerd's stderr (JSON log lines) to its error; the project's line is among them. */
  #fromRuntimeStderr(message: string): string | null {
    for (const line of message.split("\n")) {
      if (!line.startsWith("{")) continue;
      try {
        const logged = (JSON.parse(line) as { message?: unknown }).message;
        if (typeof logged !== "string") continue;
        const bundle = this.#bundle();
        const uncaught = UNCAUGHT_AT_LOAD.exec(bundle ? mapBundleLocations(logged, bundle) : logged);
        if (uncaught) return uncaught[1]!.trim();
      } catch {
        // not a log line
      }
    }
    return null;
  }
}

/** A stack with the project's own files named relative to it (`src/index.ts:4:21`), as under workerd. */
export function projectRelativeStack(stack: string, projectDir: string): string {
  const prefix = projectDir.endsWith(path.sep) ? projectDir : projectDir + path.sep;
  return stack.replaceAll(pathToFileURL(prefix).href, "").replaceAll(prefix, "");
}

/** `--node`: an error the project's top-level code threw while its bundle was imported, with its (source-mapped) stack. */
export function nodeLoadFailure(error: unknown, projectDir: string): PlatformError {
  const stack = error instanceof Error ? (error.stack ?? String(error)) : String(error);
  return new PlatformError(
    "build_failed",
    `The project threw while its module was loading (top-level code runs when the project starts):\n  ${projectRelativeStack(stack, projectDir).replace(/\n\s*/g, "\n    ")}`,
  );
}
