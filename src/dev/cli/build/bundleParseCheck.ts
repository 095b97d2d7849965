import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { PlatformError } from "../../../core/errors.ts";
import { type MappedBundle, sourceLocation } from "./bundleStackMapper.ts";

/**
 * Refuses a worker bundle that does not parse as a module, before workerd
 * is handed it. esbuild passes some code that no engine accepts (an invalid
 * regular expression literal, say); workerd would print its raw `Uncaught
 * SyntaxError` and a warning per Durable Object class it then cannot find.
 * Node's own parser (`node --check`, same V8) says the same in ~0.1 s, and
 * the location is mapped to the project's source. Throws `build_failed`.
 */
export function checkBundleParses(bundle: MappedBundle): void {
  const checked = spawnSync(process.execPath, ["--input-type=module", "--check"], {
    input: readFileSync(bundle.bundlePath),
    encoding: "utf8",
  });
  if (checked.status === 0) return;
  const said = checked.stderr ?? "";
  const message = /^(\w*Error: .*)$/m.exec(said)?.[1] ?? said.trim().split("\n").at(-1) ?? "it does not parse";
  throw new PlatformError(
    "build_failed",
    `${message}${locationIn(bundle, said)} (the bundle does not parse, so it was not loaded; save a fix)`,
  );
}

/** ` at src/index.ts:2:9` from node's `[stdin]:LINE`, the code line and its carets; nothing when it cannot say. */
function locationIn(bundle: MappedBundle, said: string): string {
  const lines = said.split("\n");
  const at = lines.findIndex((line) => /^\[stdin\]:\d+$/.test(line));
  if (at === -1) return "";
  const line = Number(lines[at]!.slice("[stdin]:".length));
  const caret = lines[at + 2]?.indexOf("^") ?? -1;
  const where = sourceLocation(bundle, line, Math.max(caret, 0) + 1);
  return where ? ` at ${where}` : "";
}
