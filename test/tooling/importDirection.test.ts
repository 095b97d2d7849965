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
      "src/workers/api/index.ts": 'import { events } from "../../dev/routes/testEvents.ts";\nexport { events };\n',
      "src/workers/gateway/index.ts": 'import { runtime } from "../../runtime/index.ts";\nexport { runtime };\n',
      "src/plugins/email-send/index.ts": 'import { runtime } from "../../runtime/index.ts";\nexport { runtime };\n',
      "src/objects/Counter.ts": 'import { runtime } from "../runtime/index.ts";\nexport { runtime };\n',
      "src/core/token.ts": 'import { runtime } from "../runtime/index.ts";\nexport { runtime };\n',
      // A type-only import is still an edge: the engine would depend on the runtime's shape.
      "src/engine/run.ts": 'import type { runtime } from "../runtime/index.ts";\nexport type R = typeof runtime;\n',
      "src/engine/api/clock.ts": 'import { hrtime } from "node:process";\nexport { hrtime };\n',
      "src/runtime/email.ts": 'import { sendEmail } from "../plugins/email-send/send.ts";\nexport { sendEmail };\n',
      "src/runtime/api.ts": 'import { events } from "../workers/api/index.ts";\nexport { events };\n',
      "src/contracts/a.ts": 'import type { B } from "./b.ts";\nexport type A = B[];\n',
      "src/contracts/b.ts": 'import type { A } from "./a.ts";\nexport type B = A | 1;\n',
    });
    expect(exitCode).not.toBe(0);
    for (const line of [
      "error nothing-imports-dev: src/workers/api/index.ts → src/dev/routes/testEvents.ts",
      "error workers-import-only-core-contracts-objects-workers: src/workers/api/index.ts → src/dev/routes/testEvents.ts",
      "error workers-import-only-core-contracts-objects-workers: src/workers/gateway/index.ts → src/runtime/index.ts",
      "error platform-workers-never-reach-the-runtime: src/workers/gateway/index.ts → src/runtime/index.ts",
      "error plugins-import-only-core-contracts-objects-workers-plugins: src/plugins/email-send/index.ts → src/runtime/index.ts",
      "error objects-import-only-core-contracts-engine: src/objects/Counter.ts → src/runtime/index.ts",
      "error core-imports-only-core: src/core/token.ts → src/runtime/index.ts",
      "error engine-imports-only-core-and-contracts: src/engine/run.ts → src/runtime/index.ts",
      "error shared-layers-use-no-node-apis: src/engine/api/clock.ts → process",
      "error runtime-imports-only-core-contracts-engine-objects-runtime: src/runtime/api.ts → src/workers/api/index.ts",
      "error imports-resolve: src/runtime/email.ts → ../plugins/email-send/send.ts",
      "error no-cycles: src/contracts/a.ts → ",
    ]) {
      expect(output).toContain(line);
    }
  }, 20_000);

  it("finds a worker that reaches the runtime through an actor it hosts", async () => {
    const { exitCode, output } = await checkImports({
      "src/engine/run.ts": "export const run = 1;\n",
      "src/objects/Counter.ts": 'import { run } from "../engine/run.ts";\nexport { run };\n',
      "src/workers/api/index.ts": 'import { run } from "../../objects/Counter.ts";\nexport { run };\n',
    });
    expect(exitCode).not.toBe(0);
    expect(output).toContain(
      "error platform-workers-never-reach-the-runtime: src/workers/api/index.ts → src/engine/run.ts",
    );
  }, 20_000);

  it("passes imports that follow the layers (core <- contracts <- engine <- objects <- runtime; workers, plugins)", async () => {
    const { exitCode, output } = await checkImports({
      "src/contracts/dispatch.ts": 'import { code } from "../core/errors.ts";\nexport const dispatch = code;\n',
      "src/engine/run.ts": 'import { dispatch } from "../contracts/dispatch.ts";\nexport const run = dispatch;\n',
      "src/objects/RunActor.ts": 'import { run } from "../engine/run.ts";\nexport const actor = run;\n',
      "src/objects/Counter.ts": 'import { code } from "../core/errors.ts";\nexport const counter = code;\n',
      "src/runtime/index.ts": 'import { actor } from "../objects/RunActor.ts";\nexport const runtime = actor;\n',
      "src/runtime/node/host.ts": 'import { readFileSync } from "node:fs";\nexport { readFileSync };\n',
      "src/workers/db/projects.ts":
        'import { counter } from "../../objects/Counter.ts";\nexport const projects = counter;\n',
      "src/workers/api/index.ts":
        'import type { dispatch } from "../../contracts/dispatch.ts";\nexport type D = typeof dispatch;\n',
      "src/plugins/email-send/index.ts":
        'import { projects } from "../../workers/db/projects.ts";\nexport { projects };\n',
      "src/dev/routes/testEvents.ts": 'import { runtime } from "../../runtime/index.ts";\nexport { runtime };\n',
    });
    // Eleven files and node's fs: every import above was seen, so a green run means they were checked.
    expect(output).toContain("no dependency violations found (12 modules, 10 dependencies cruised)");
    expect(exitCode).toBe(0);
  }, 20_000);
});
