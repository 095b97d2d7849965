import * as esbuild from "esbuild";
import { spawn } from "node:child_process";
import { cp, mkdir, readdir, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { isBuiltin } from "node:module";
import path from "node:path";
import { readPlatformWorkerConfigs } from "../cli/deploy/platformWorkerConfigs.ts";
import { CLI_DEPENDENCIES, PACKAGE_ENTRY_POINTS, packageManifest, type RepositoryManifest } from "./packageManifest.ts";

/**
 * `npm run package`: the installable `platform` package, staged in
 * `<outDir>/package` and packed into `<outDir>/platform-<version>.tgz`.
 *
 *   src/        the TypeScript sources, as in the repository: what the CLI
 *               bundles into a project's worker and into the platform's own
 *               workers for `platform dev`, and what the source maps name
 *   dist/       the same files compiled to ES modules (with source maps), run
 *               by Node: the CLI, and `platform`, `platform/testing` and
 *               `platform/node` for a project's tests; `.d.ts` types for the
 *               three entry points
 *   bin/        the `platform` command; migrations/ (D1), demo/ (`platform dev`
 *               without a folder), wrangler.toml (the API worker's config; the
 *               others are beside their workers in src/), README.md (the
 *               user's guide), package.json
 */

export interface PackageBuildOptions {
  repoRoot: string;
  outDir: string;
  /** Progress lines (the last line `npm run package` prints is the tarball's path, not one of these). */
  log?: (line: string) => void;
}

async function filesUnder(dir: string, keep: (file: string) => boolean): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name))
    .filter(keep)
    .sort();
}

/** Every import kept as it is, a relative `./x.ts` renamed `./x.js`: one output module per source module. */
const keepModules: esbuild.Plugin = {
  name: "keep-modules",
  setup(build) {
    build.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind === "entry-point") return undefined;
      const relative = args.path.startsWith("./") || args.path.startsWith("../");
      return { path: relative ? args.path.replace(/\.ts$/, ".js") : args.path, external: true };
    });
  },
};

/** `src/**\/*.ts` → `dist/**\/*.js` with linked source maps naming the shipped sources. */
async function compile(repoRoot: string, stage: string): Promise<void> {
  // The console's browser modules too: the CLI prints log lines and failed steps with the console's own words.
  const sources = await filesUnder(
    path.join(stage, "src"),
    (f) => (f.endsWith(".ts") && !f.endsWith(".d.ts")) || (f.includes("/console/public/") && f.endsWith(".js")),
  );
  await esbuild.build({
    // The repository's compiler options, wherever the stage is (esbuild would look for a tsconfig above it).
    tsconfig: path.join(repoRoot, "tsconfig.base.json"),
    entryPoints: sources,
    outbase: path.join(stage, "src"),
    outdir: path.join(stage, "dist"),
    bundle: true,
    plugins: [keepModules],
    format: "esm",
    platform: "node",
    target: "node22",
    sourcemap: "linked",
    sourcesContent: false,
    logLevel: "silent",
  });
}

function run(command: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0
        ? resolve(stdout)
        : reject(new Error(`${command} ${args.join(" ")} failed (${code}):\n${stdout}${stderr}`)),
    );
  });
}

/** The two declaration passes: the runtime and the test kit typed for workerd, `platform/node` for Node. */
const DECLARATION_PASSES = [
  {
    name: "workerd",
    types: ["workers-types"],
    lib: ["ES2023"],
    roots: ["@cloudflare", "@types"],
    entries: [".", "./testing"],
  },
  // As tsconfig.node.json: Node's types and the DOM's web APIs.
  { name: "node", types: ["node"], lib: ["ES2023", "DOM"], roots: ["@types"], entries: ["./node"] },
] as const;

/**
 * `.d.ts` files for the entry points, in two passes: the runtime and the test
 * kit typed for workerd (as a project is), `platform/node` for Node.
 */
async function declarations(repoRoot: string, stage: string): Promise<void> {
  const tsc = await realpath(path.join(repoRoot, "node_modules/.bin/tsc"));
  const modules = path.join(repoRoot, "node_modules");
  // The runtime's own dependencies (croner, @noble/ed25519, …) resolve as they will once installed: from a
  // node_modules beside the staged sources, here the repository's, linked for the two passes only.
  const linkedModules = path.join(stage, "node_modules");
  await symlink(modules, linkedModules, "dir");
  try {
    await declarationPasses({ repoRoot, stage, tsc, modules });
  } finally {
    await rm(linkedModules);
  }
  // Specifiers as every resolver reads them in a declaration file: `./x.js` for `./x.d.ts`.
  for (const file of await filesUnder(path.join(stage, "dist"), (f) => f.endsWith(".d.ts"))) {
    const text = await readFile(file, "utf8");
    await writeFile(file, text.replace(/((?:from|import)\s*\(?\s*["']\.{1,2}\/[^"']*)\.ts(["'])/g, "$1.js$2"));
  }
}

/** One tsc run per pass, each with its own generated tsconfig (removed afterwards). */
async function declarationPasses(at: { repoRoot: string; stage: string; tsc: string; modules: string }): Promise<void> {
  const { repoRoot, stage, tsc, modules } = at;
  for (const pass of DECLARATION_PASSES) {
    const config = path.join(stage, `tsconfig.${pass.name}.json`);
    await writeFile(
      config,
      JSON.stringify({
        extends: path.join(repoRoot, "tsconfig.base.json"),
        compilerOptions: {
          noEmit: false,
          declaration: true,
          emitDeclarationOnly: true,
          rootDir: path.join(stage, "src"),
          outDir: path.join(stage, "dist"),
          typeRoots: pass.roots.map((root) => path.join(modules, root)),
          types: pass.types,
          lib: pass.lib,
          paths: {},
        },
        files: pass.entries.map((name) => path.join(stage, "src", `${PACKAGE_ENTRY_POINTS[name]}.ts`)),
      }),
    );
    await run(process.execPath, [tsc, "-p", config], stage);
    await rm(config);
  }
}

/** `@scope/name/sub` → `@scope/name`; `name/sub` → `name`. */
function packageNameOf(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

/**
 * Fails the build when something the package runs imports a package it does
 * not depend on: the CLI and the three entry points as Node runs them
 * (dist/), and what the CLI bundles (the runtime's entry, the actor classes,
 * the platform's workers, the demo) as esbuild reads them (src/).
 */
async function checkDependencies(stage: string, self: string, dependencies: Record<string, string>): Promise<void> {
  const entryPoints = [
    "dist/dev/cli/main.js",
    ...Object.values(PACKAGE_ENTRY_POINTS).map((stem) => `dist/${stem}.js`),
    "src/runtime/entry/createPlatformWorker.ts",
    "src/objects/index.ts",
    "src/runtime/node/nodeWorkflowBackend.ts",
    // The platform's workers as their wrangler.toml name them, the dev-only API and the fake providers.
    ...readPlatformWorkerConfigs(stage).map((worker) =>
      path.join(path.dirname(worker.configPath), String(worker.raw.main)),
    ),
    "src/dev/routes/devApiWorker.ts",
    ...(await filesUnder(path.join(stage, "src/dev/fakes"), (f) => path.basename(f) === "index.ts")).map((f) =>
      path.relative(stage, f),
    ),
    "demo/src/index.ts",
  ].map((file) => path.join(stage, file));
  const result = await esbuild.build({
    entryPoints,
    bundle: true,
    write: false,
    metafile: true,
    packages: "external",
    external: ["cloudflare:*"],
    platform: "node",
    format: "esm",
    outdir: path.join(stage, ".check"),
    // No tsconfig of a folder above the stage may map a name (the repository maps `platform` to its sources).
    tsconfigRaw: "{}",
    logLevel: "silent",
  });
  const missing = new Map<string, string>();
  for (const [file, input] of Object.entries(result.metafile.inputs)) {
    for (const imported of input.imports) {
      if (!imported.external || isBuiltin(imported.path) || imported.path.startsWith("cloudflare:")) continue;
      const name = packageNameOf(imported.path);
      // The demo imports the package itself, by its name.
      if (name !== self && !(name in dependencies) && !missing.has(name)) missing.set(name, file);
    }
  }
  if (missing.size) {
    const lines = [...missing].map(([name, file]) => `  ${name} (imported by ${file})`);
    throw new Error(`The platform package does not depend on what it imports:\n${lines.join("\n")}`);
  }
}

/** Builds, checks and packs the package; resolves with the tarball's absolute path. */
export async function buildPackage({ repoRoot, outDir, log = () => {} }: PackageBuildOptions): Promise<string> {
  const repository = JSON.parse(await readFile(path.join(repoRoot, "package.json"), "utf8")) as RepositoryManifest;
  const manifest = packageManifest(repository);
  const stage = path.join(outDir, "package");
  await rm(stage, { recursive: true, force: true });
  await mkdir(stage, { recursive: true });

  log(`Staging ${path.relative(repoRoot, stage) || stage}`);
  for (const item of ["src", "bin", "migrations", "demo/src", "demo/package.json", "wrangler.toml"]) {
    await cp(path.join(repoRoot, item), path.join(stage, item), { recursive: true });
  }
  await cp(path.join(repoRoot, "src/dev/package/README.md"), path.join(stage, "README.md"));
  await writeFile(path.join(stage, "package.json"), JSON.stringify(manifest, null, 2) + "\n");

  log("Compiling src/ to dist/ (esbuild)");
  await compile(repoRoot, stage);
  log("Writing the entry points' types (tsc)");
  await declarations(repoRoot, stage);
  log("Checking the package's dependencies");
  await checkDependencies(stage, repository.name, manifest.dependencies as Record<string, string>);

  log(`Packing (${CLI_DEPENDENCIES.length} CLI dependencies beside the runtime's)`);
  const packed = JSON.parse(await run("npm", ["pack", "--json", "--pack-destination", outDir], stage)) as {
    filename: string;
  }[];
  return path.join(outDir, packed[0]!.filename);
}
