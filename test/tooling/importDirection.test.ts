import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const repo = path.resolve(import.meta.dirname, "../..");
const depcruise = path.join(repo, "node_modules/dependency-cruiser/bin/dependency-cruiser.mjs");

// `npm run check:deps` on a small tree: the repository's own rules, so the check cannot quietly stop seeing
// imports (a parser that goes missing, a rule whose pattern no longer matches) while the real tree stays green.
async function checkImports(files: Record<string, string>): Promise<{ exitCode: number; output: string }> {
  const root = mkdtempSync(path.join(tmpdir(), "import-direction-"));
  const tree = { "tsconfig.json": "{}", "src/core/errors.ts": "export const code = 'x';\n", ...files };
  for (const [file, text] of Object.entries(tree)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
  const args = [depcruise, "src", "--config", path.join(repo, ".dependency-cruiser.cjs")];
  try {
    const { stdout } = await run(process.execPath, args, { cwd: root });
    return { exitCode: 0, output: stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { exitCode: failed.code, output: failed.stdout + failed.stderr };
  }
}

describe("the import-direction check", () => {
  it("refuses wrong imports and names the rule each one breaks", async () => {
    const { exitCode, output } = await checkImports({
      "src/dev/routes/testEvents.ts": "export const events = [];\n",
      "src/runtime/index.ts": "export const runtime = 1;\n",
      "src/platform/api/index.ts": 'import { events } from "../../dev/routes/testEvents.ts";\nexport { events };\n',
      "src/core/token.ts": 'import { runtime } from "../runtime/index.ts";\nexport { runtime };\n',
      // A type-only import is still an edge: the engine would depend on the runtime's shape.
      "src/engine/run.ts": 'import type { runtime } from "../runtime/index.ts";\nexport type R = typeof runtime;\n',
      "src/engine/clock.ts": 'import { hrtime } from "node:process";\nexport { hrtime };\n',
      "src/runtime/email.ts":
        'import { sendEmail } from "../platform/plugins/email-send/send.ts";\nexport { sendEmail };\n',
    });
    expect(exitCode).not.toBe(0);
    for (const line of [
      "error nothing-imports-dev: src/platform/api/index.ts → src/dev/routes/testEvents.ts",
      "error platform-imports-only-core-contracts-platform: src/platform/api/index.ts → src/dev/routes/testEvents.ts",
      "error core-imports-only-core: src/core/token.ts → src/runtime/index.ts",
      "error engine-imports-only-core-and-contracts: src/engine/run.ts → src/runtime/index.ts",
      "error shared-layers-use-no-node-apis: src/engine/clock.ts → process",
      "error imports-resolve: src/runtime/email.ts → ../platform/plugins/email-send/send.ts",
    ]) {
      expect(output).toContain(line);
    }
  }, 20_000);

  it("passes imports that follow core <- contracts <- engine <- runtime and platform <- core, contracts", async () => {
    const { exitCode, output } = await checkImports({
      "src/contracts/dispatch.ts": 'import { code } from "../core/errors.ts";\nexport const dispatch = code;\n',
      "src/engine/run.ts": 'import { dispatch } from "../contracts/dispatch.ts";\nexport const run = dispatch;\n',
      "src/runtime/index.ts": 'import { run } from "../engine/run.ts";\nexport const runtime = run;\n',
      "src/runtime/node/host.ts": 'import { readFileSync } from "node:fs";\nexport { readFileSync };\n',
      "src/platform/api/index.ts":
        'import type { dispatch } from "../../contracts/dispatch.ts";\nexport type D = typeof dispatch;\n',
      "src/dev/routes/testEvents.ts": 'import { runtime } from "../../runtime/index.ts";\nexport { runtime };\n',
    });
    // Seven files and node's fs: every import above was seen, so a green run means they were checked.
    expect(output).toContain("no dependency violations found (8 modules, 6 dependencies cruised)");
    expect(exitCode).toBe(0);
  }, 20_000);
});
