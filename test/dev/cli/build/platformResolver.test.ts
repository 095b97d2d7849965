import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildProject } from "#src/dev/cli/build/buildProject.ts";
import { TESTING_IN_BUNDLE_MESSAGE } from "#src/dev/cli/build/platformResolver.ts";
import { RUNTIME_DIR } from "#src/dev/cli/repoPaths.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function projectWith(source: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "platform-resolver-"));
  dirs.push(dir);
  await mkdir(path.join(dir, "src"));
  await writeFile(path.join(dir, "src", "index.ts"), source);
  return dir;
}

describe("platformResolver: the workflow test kit never reaches a bundle", () => {
  it.each(["worker", "node"] as const)(
    "a %s build importing platform/testing fails with a clear message",
    async (target) => {
      const dir = await projectWith(
        'import { testWorkflow } from "platform/testing";\nexport default { fetch: () => new Response(String(testWorkflow)) };\n',
      );
      const failure = await buildProject(dir, path.join(dir, "out"), { target }).catch((error: unknown) => error);
      expect(failure).toMatchObject({ code: "build_failed" });
      expect(String((failure as Error).message)).toContain(TESTING_IN_BUNDLE_MESSAGE);
    },
  );

  it("a project importing platform still builds", async () => {
    const dir = await projectWith(
      'import { PlatformError } from "platform";\nexport default { fetch: () => new Response(PlatformError.name) };\n',
    );
    await expect(buildProject(dir, path.join(dir, "out"))).resolves.toMatchObject({ target: "worker" });
  });

  it("a project with another copy of platform in its node_modules still builds against the CLI's runtime", async () => {
    const dir = await projectWith(
      'import { PlatformError } from "platform";\nexport default { fetch: () => new Response(PlatformError.name) };\n',
    );
    const copy = path.join(dir, "node_modules", "platform");
    await mkdir(copy, { recursive: true });
    await writeFile(path.join(copy, "package.json"), '{ "name": "platform", "type": "module", "main": "index.js" }');
    await writeFile(path.join(copy, "index.js"), "export class PlatformError {}\n");
    const built = await buildProject(dir, path.join(dir, "out"));
    const sources = Object.keys(built.bytesBySource);
    expect(sources).toContain(path.join(RUNTIME_DIR, "entry", "createPlatformWorker.ts"));
    expect(sources.some((file) => file.startsWith(path.join(RUNTIME_DIR, "..", "core")))).toBe(true);
    expect(sources.filter((file) => file.startsWith(copy))).toEqual([]);
  });
});
