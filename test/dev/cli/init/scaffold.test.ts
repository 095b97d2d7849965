import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { initCommand } from "#src/dev/cli/commands/init.ts";
import { completedGitignore, SCAFFOLD_SCRIPTS, scaffoldFiles, type ScaffoldInput } from "#src/dev/cli/init/scaffold.ts";
import { REPO_ROOT } from "#src/dev/cli/repoPaths.ts";

const versions: ScaffoldInput["versions"] = {
  "itty-router": "5.0.24",
  typescript: "7.0.2",
  vitest: "5.1.1",
  "@cloudflare/workers-types": "5.20261117.1",
};

function manifestOf(existing: Record<string, unknown> | null) {
  const files = scaffoldFiles({ slug: "shop", existing, platformSpec: "^0.1.0", versions }, { gitignore: null });
  return JSON.parse(files["package.json"]!) as Record<string, any>;
}

describe("scaffoldFiles: package.json", () => {
  it("an empty folder: a project named after it that depends on platform and its own tools", () => {
    expect(manifestOf(null)).toEqual({
      name: "shop",
      private: true,
      type: "module",
      scripts: { dev: "platform dev .", test: "vitest run", typecheck: "tsc", push: "platform push ." },
      dependencies: { platform: "^0.1.0", "itty-router": "5.0.24" },
      devDependencies: { "@cloudflare/workers-types": "5.20261117.1", typescript: "7.0.2", vitest: "5.1.1" },
      allowScripts: { esbuild: true, node: true, workerd: true },
    });
  });

  const kept: { name: string; existing: Record<string, unknown>; expected: Record<string, unknown> }[] = [
    {
      name: "after `npm install <tarball>`: the install's platform spec stays",
      existing: { dependencies: { platform: "file:../platform-0.1.0.tgz" } },
      expected: { name: "shop", dependencies: { platform: "file:../platform-0.1.0.tgz", "itty-router": "5.0.24" } },
    },
    {
      name: "after `npm init -y`: its name, fields and scripts stay; the four scripts are the scaffold's",
      existing: {
        name: "my-shop",
        version: "1.0.0",
        license: "ISC",
        scripts: { test: 'echo "Error: no test specified" && exit 1', lint: "biome lint" },
      },
      expected: {
        name: "my-shop",
        version: "1.0.0",
        license: "ISC",
        scripts: { ...SCAFFOLD_SCRIPTS, lint: "biome lint" },
      },
    },
    {
      name: "versions the user chose stay",
      existing: { devDependencies: { vitest: "5.2.0" }, dependencies: { "itty-router": "5.0.18" } },
      expected: {
        devDependencies: { vitest: "5.2.0", "@cloudflare/workers-types": "5.20261117.1", typescript: "7.0.2" },
        dependencies: { "itty-router": "5.0.18", platform: "^0.1.0" },
      },
    },
    {
      name: "allowScripts the user set stay beside the platform's",
      existing: { allowScripts: { sharp: true } },
      expected: { allowScripts: { sharp: true, esbuild: true, node: true, workerd: true } },
    },
  ];
  it.each(kept)("$name", ({ existing, expected }) => {
    expect(manifestOf(existing)).toMatchObject(expected);
  });
});

describe("completedGitignore", () => {
  it.each([
    [null, ".platform/\nnode_modules/\n.dev.vars\n"],
    ["dist/\n", "dist/\n.platform/\nnode_modules/\n.dev.vars\n"],
    ["dist/", "dist/\n.platform/\nnode_modules/\n.dev.vars\n"],
    [".platform/\nnode_modules\n", ".platform/\nnode_modules\n.dev.vars\n"],
    [".platform/\nnode_modules/\n.dev.vars\n", null],
  ])("%j → %j", (existing, completed) => {
    expect(completedGitignore(existing)).toBe(completed);
  });
});

describe("scaffoldFiles: the project", () => {
  it("writes the entry, its first test, the configs and a .gitignore that keeps .dev.vars out of git", () => {
    const input = { slug: "shop", existing: null, platformSpec: "^0.1.0", versions };
    const fresh = scaffoldFiles(input, { gitignore: null });
    expect(Object.keys(fresh).sort()).toEqual([
      ".gitignore",
      "package.json",
      "src/index.ts",
      "test/index.test.ts",
      "tsconfig.json",
      "vitest.config.ts",
    ]);
    expect(fresh[".gitignore"]).toBe(".platform/\nnode_modules/\n.dev.vars\n");
    const files = scaffoldFiles(input, { gitignore: ".platform\nnode_modules/\n.dev.vars\n" });
    expect(files[".gitignore"]).toBeUndefined();
    expect(JSON.parse(files["tsconfig.json"]!).compilerOptions.types).toEqual(["@cloudflare/workers-types"]);
    expect(files["test/index.test.ts"]).toContain(
      'import { testPlugin, testRequest, testWorkflow } from "platform/testing";',
    );
    expect(files["src/index.ts"]).toContain("Hello from shop");
  });

  // The first test shows the kit on what the entry has; the package e2e runs it in a scaffolded project.
  it.each([
    ["a request", "src/index.ts", 'router.get("/api/hello/:name"'],
    [
      "a workflow that fails on bad data",
      "src/index.ts",
      'workflow<{ name: string }, object, { greeting: string }>("greet"',
    ],
    ["a command answered with a button", "src/index.ts", 'chatserver.onCommand(\n  "hello"'],
    ["the button's handler", "src/index.ts", 'chatserver.onComponent("wave"'],
    [
      "its failure's cause naming src/index.ts",
      "test/index.test.ts",
      "stack: expect.stringMatching(/src[\\/]index\\.ts:\\d+/)",
    ],
    ["one run for one idempotency key", "test/index.test.ts", 'idempotencyKey: "signup-ada"'],
    ["the command's reply", "test/index.test.ts", 'await bot.command("hello"'],
    [
      "the click's update",
      "test/index.test.ts",
      'expect(click.update).toEqual({ content: "Grace waved back.", components: [] });',
    ],
  ])("has %s (%s)", (_what, file, text) => {
    const files = scaffoldFiles(
      { slug: "shop", existing: null, platformSpec: "^0.1.0", versions },
      { gitignore: null },
    );
    expect(files[file]).toContain(text);
  });
});

describe("platform init <dir>", () => {
  const work = mkdtempSync(path.join(tmpdir(), "platform-init-"));
  const log = vi.spyOn(console, "log").mockImplementation(() => {});
  afterAll(() => {
    log.mockRestore();
    rmSync(work, { recursive: true, force: true });
  });
  const init = (dir: string) => initCommand.run({ positionals: [dir], values: {} });

  it("creates a missing folder; from a checkout the project depends on platform by version", async () => {
    const dir = path.join(work, "fresh");
    await init(dir);
    const version = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")).version;
    expect(JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")).dependencies.platform).toBe(`^${version}`);
    expect(readdirSync(dir).sort()).toEqual([
      ".gitignore",
      "package.json",
      "src",
      "test",
      "tsconfig.json",
      "vitest.config.ts",
    ]);
    expect(log.mock.calls.flat().join("\n")).toContain(`Run it from this checkout: platform dev ${dir}`);
  });

  // Versions npm reports as deprecated (`npm view itty-router@6.0.0 deprecated`): a fresh install would warn.
  const deprecatedOnRegistry: Record<string, string[]> = { "itty-router": ["6.0.0"] };

  it("pins the itty-router this repository depends on and tests with, not a deprecated one", async () => {
    const dir = path.join(work, "router");
    await init(dir);
    const readManifest = (file: string) => JSON.parse(readFileSync(file, "utf8"));
    const scaffolded = readManifest(path.join(dir, "package.json")).dependencies["itty-router"];
    expect(scaffolded).toBe(readManifest(path.join(REPO_ROOT, "package.json")).dependencies["itty-router"]);
    expect(scaffolded).toBe(readManifest(path.join(REPO_ROOT, "node_modules/itty-router/package.json")).version);
    expect(deprecatedOnRegistry["itty-router"]).not.toContain(scaffolded);
  });

  it("completes a folder where only platform was installed, keeping its package.json and completing its .gitignore", async () => {
    const dir = path.join(work, "installed");
    mkdirSync(path.join(dir, "node_modules"), { recursive: true });
    writeFileSync(path.join(dir, "package.json"), JSON.stringify({ dependencies: { platform: "file:../p.tgz" } }));
    writeFileSync(path.join(dir, "package-lock.json"), "{}");
    writeFileSync(path.join(dir, ".gitignore"), "dist/\n");
    await init(dir);
    const manifest = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
    expect(manifest.dependencies.platform).toBe("file:../p.tgz");
    expect(manifest.scripts).toEqual(SCAFFOLD_SCRIPTS);
    expect(readFileSync(path.join(dir, ".gitignore"), "utf8")).toBe("dist/\n.platform/\nnode_modules/\n.dev.vars\n");
  });

  it.each([
    ["a folder with anything else", ["README.md"], /is not empty \(README\.md\)/],
    ["a folder already scaffolded", ["src", "package.json"], /is not empty \(src\)/],
  ])("refuses %s, naming what is there", async (_label, entries, message) => {
    const dir = mkdtempSync(path.join(work, "full-"));
    for (const entry of entries) writeFileSync(path.join(dir, entry), "{}");
    await expect(init(dir)).rejects.toThrow(message);
  });

  it("refuses a package.json that is not JSON, and a path that is a file", async () => {
    const dir = mkdtempSync(path.join(work, "broken-"));
    writeFileSync(path.join(dir, "package.json"), "{ nope");
    await expect(init(dir)).rejects.toThrow(/is not valid JSON/);
    await expect(init(path.join(dir, "package.json"))).rejects.toThrow(/is not a folder/);
  });
});
