import * as esbuild from "esbuild";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildProject, type BuildTarget } from "#src/dev/cli/build/buildProject.ts";
import { exportedNames } from "#src/dev/cli/build/platformImports.ts";
import { RUNTIME_DIR } from "#src/dev/cli/repoPaths.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function build(source: string, target: BuildTarget = "worker") {
  const dir = await mkdtemp(path.join(tmpdir(), "platform-imports-"));
  dirs.push(dir);
  await mkdir(path.join(dir, "src"));
  await writeFile(
    path.join(dir, "src", "index.ts"),
    `${source}\nexport default { fetch: () => new Response("ok") };\n`,
  );
  return buildProject(dir, path.join(dir, "out"), { target }).then(
    () => null,
    (error: Error & { code?: string }) => error,
  );
}

// Each row is a project's first line; `null`: it builds.
const cases: { name: string; source: string; target?: BuildTarget; error: string | null; frame?: string }[] = [
  {
    name: "an unused misspelled import",
    source: 'import { workflo } from "platform";',
    error: '"platform" has no export named "workflo" (did you mean "workflow"?)',
    frame: "src/index.ts:1:9:",
  },
  {
    name: "a misspelling beside a good name, aliased",
    source: 'import { email, workflo as wf } from "platform";',
    error: '"platform" has no export named "workflo" (did you mean "workflow"?)',
    frame: "src/index.ts:1:16:",
  },
  {
    name: "a name with no near export",
    source: 'import { sendSms } from "platform";',
    error: '"platform" has no export named "sendSms"',
  },
  {
    name: "a re-export",
    source: 'export { workflo } from "platform";',
    error: '"platform" has no export named "workflo" (did you mean "workflow"?)',
  },
  {
    name: "a default import",
    source: 'import platform from "platform";',
    error: '"platform" has no default export; import its names: import { workflow } from "platform"',
  },
  {
    name: "platform/node in a Node build",
    source: 'import { openSqliteWorkflowStor } from "platform/node";',
    target: "node",
    error: '"platform/node" has no export named "openSqliteWorkflowStor" (did you mean "openSqliteWorkflowStore"?)',
  },
  { name: "unused good names", source: 'import { workflow, email, PlatformError } from "platform";', error: null },
  { name: "a type imported without `type`", source: 'import { AuthUser } from "platform";', error: null },
  { name: "a type-only import", source: 'import { type AuthUser, type StepContext } from "platform";', error: null },
  { name: "a namespace import", source: 'import * as platform from "platform";', error: null },
  { name: "a commented-out import", source: '// import { workflo } from "platform";', error: null },
  { name: "a string that looks like one", source: 'const s = `import { workflo } from "platform";`;', error: null },
];

describe("platformImportCheck: an import of a name platform does not export fails the build, used or not", () => {
  it.each(cases)("$name", async ({ source, target, error, frame }) => {
    const failure = await build(source, target);
    if (error === null) {
      expect(failure).toBeNull();
      return;
    }
    expect(failure).toMatchObject({ code: "build_failed" });
    expect(failure!.message.split("\n")[0]).toBe(error);
    if (frame) expect(failure!.message).toContain(frame);
  });
});

describe("exportedNames: read from the runtime's index", () => {
  it.each([
    ["platform", "index.ts"],
    ["platform/node", "node/index.ts"],
  ])("%s: every value the module exports, and its types", async (_module, file) => {
    const index = path.join(RUNTIME_DIR, file);
    const built = await esbuild.build({
      entryPoints: [index],
      bundle: true,
      write: false,
      metafile: true,
      format: "esm",
      platform: "node",
      packages: "external",
      external: ["cloudflare:*"],
      outdir: "out",
      logLevel: "silent",
    });
    const values = Object.values(built.metafile.outputs).flatMap((output) => output.exports);
    expect(values.length).toBeGreaterThan(3);
    const names = exportedNames(index);
    expect([...names]).toEqual(expect.arrayContaining(values));
  });

  it("platform's types are exports too", () => {
    expect([...exportedNames(path.join(RUNTIME_DIR, "index.ts"))]).toEqual(
      expect.arrayContaining(["AuthUser", "StepContext", "WorkflowRun", "PlatformErrorCode"]),
    );
  });
});
