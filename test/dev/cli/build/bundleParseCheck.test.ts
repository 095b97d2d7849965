import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkBundleParses } from "#src/dev/cli/build/bundleParseCheck.ts";
import { buildProject } from "#src/dev/cli/build/buildProject.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "platform-parse-check-"));
  mkdirSync(path.join(dir, "src"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function built(source: string) {
  writeFileSync(path.join(dir, "src/index.ts"), source);
  return buildProject(dir, path.join(dir, ".platform/build"), { sourceMap: true });
}

describe("a bundle that does not parse is refused before workerd sees it", () => {
  it("esbuild passes an invalid regular expression; the check refuses it with the engine's message at the source line", async () => {
    const build = await built(
      'const greeting = "hi";\nconst pattern = /(/;\nexport default { fetch: () => new Response(greeting + String(pattern)) };\n',
    );
    expect(() => checkBundleParses(build)).toThrow(
      expect.objectContaining({
        code: "build_failed",
        message:
          "SyntaxError: Invalid regular expression: /(/: Unterminated group at src/index.ts:2:17 (the bundle does not parse, so it was not loaded; save a fix)",
      }),
    );
  });

  it("a bundle that parses passes", async () => {
    const build = await built('export default { fetch: () => new Response(String(/a+/.test("aa"))) };\n');
    expect(() => checkBundleParses(build)).not.toThrow();
  });
});
