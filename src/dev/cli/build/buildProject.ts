import * as esbuild from "esbuild";
import { existsSync, statSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { builtinModules } from "node:module";
import path from "node:path";
import { PROJECT_DURABLE_OBJECTS } from "../../../contracts/projectDurableObjects.ts";
import { PlatformError } from "../../../core/errors.ts";
import { refuseLinksOutOfProject } from "../linksOutOfProject.ts";
import { REPO_NODE_MODULES, REPO_ROOT, RUNTIME_DIR } from "../repoPaths.ts";
import { buildFailure, buildFailureFrom, fatalWarnings } from "./buildFailure.ts";
import { nativeSqliteGuard } from "./nativeSqliteGuard.ts";
import { dependencySourceMaps } from "./dependencySourceMaps.ts";
import { platformImportCheck } from "./platformImports.ts";
import { platformResolver } from "./platformResolver.ts";

const ENTRY_CANDIDATES = ["src/index.ts", "src/index.js", "index.ts", "index.js"];

/**
 * What the bundle runs on: `worker` (workerd; the default, used by `platform
 * dev` and `platform push`) or `node` (a plain Node 22 process, `platform dev
 * --node`). Only a worker build carries the native-SQLite guard and the
 * Durable Object classes; only a node build may reach `platform/node`.
 */
export type BuildTarget = "worker" | "node";

export interface BuildOptions {
  target?: BuildTarget;
  /**
   * Write `<bundle>.map`, so stack traces can name `src/…:line:col`: linked
   * from the bundle (`true`, `platform dev`), or beside it only (`"external"`,
   * `platform push`, which sends it to the platform apart from the bundle).
   */
  sourceMap?: boolean | "external";
}

/** Which optional capabilities a bundle pulled in, read from esbuild's metafile. */
export interface ProjectCapabilities {
  workflow: boolean;
}

export interface ProjectBuild {
  target: BuildTarget;
  projectDir: string;
  entry: string;
  outDir: string;
  bundlePath: string;
  bundleBytes: number;
  capabilities: ProjectCapabilities;
  /** Durable Object classes the bundle exports (the project worker's namespaces). */
  durableObjects: string[];
  /** Source files that went into the bundle (watched by `platform dev`). */
  inputs: string[];
  /** Bytes each source file contributes to the bundle (absent: tree-shaken away entirely). */
  bytesBySource: Record<string, number>;
}

export function findProjectEntry(projectDir: string): string {
  if (!existsSync(projectDir)) throw new PlatformError("build_failed", `No folder ${projectDir}.`);
  if (!statSync(projectDir).isDirectory()) throw new PlatformError("build_failed", `${projectDir} is not a folder.`);
  for (const candidate of ENTRY_CANDIDATES) {
    const full = path.join(projectDir, candidate);
    if (existsSync(full)) return full;
  }
  throw new PlatformError(
    "build_failed",
    `No project entry in ${projectDir}: expected one of ${ENTRY_CANDIDATES.join(", ")} (run \`platform init\` to scaffold one).`,
  );
}

// The workflow capability module: bundled only when user code imports `workflow` from `platform`.
const WORKFLOW_CAPABILITY = path.join(RUNTIME_DIR, "workflow", "index.ts");

function entrySource(entry: string, capabilities: ProjectCapabilities, target: BuildTarget): string {
  const lines = [
    `import project from ${JSON.stringify(entry)};`,
    `import { createPlatformWorker } from ${JSON.stringify(path.join(RUNTIME_DIR, "entry/createPlatformWorker.ts"))};`,
    `export default createPlatformWorker(project);`,
  ];
  if (capabilities.workflow && target === "worker") {
    lines.push(
      `export { WorkflowRun, WorkflowRunIndex, WorkflowFlowKey } from ${JSON.stringify(path.join(REPO_ROOT, "src/objects/index.ts"))};`,
    );
  }
  if (capabilities.workflow && target === "node") {
    // Evaluated after the project's top-level workflow() calls; the Node host installs it before serving.
    lines.push(
      `export { installNodeWorkflowBackend } from ${JSON.stringify(path.join(RUNTIME_DIR, "node/nodeWorkflowBackend.ts"))};`,
    );
  }
  return lines.join("\n");
}

/** Bundled CommonJS dependencies may call require(); give the ES module one. */
const NODE_BANNER = `import { createRequire as __platformCreateRequire } from "node:module"; const require = __platformCreateRequire(import.meta.url);`;

/** One esbuild pass; its errors, and the warnings that must fail a project (buildFailure.ts), as `build_failed`. */
async function bundle(
  projectDir: string,
  entry: string,
  capabilities: ProjectCapabilities,
  outfile: string,
  write: boolean,
  target: BuildTarget,
  sourceMap: boolean | "external",
) {
  // Every build checks the project's imports of `platform`; a dev build (with a source map) also drops
  // dependency maps that name sources the dependency does not ship.
  const checks = [platformImportCheck(), ...(sourceMap ? [dependencySourceMaps()] : [])];
  const runtime: esbuild.BuildOptions =
    target === "worker"
      ? {
          platform: "browser",
          conditions: ["workerd", "worker", "browser"],
          target: "es2023",
          external: [...builtinModules, ...builtinModules.map((m) => `node:${m}`)].filter((m) => !/sqlite/.test(m)),
          plugins: [nativeSqliteGuard(), platformResolver("worker"), ...checks],
        }
      : {
          platform: "node",
          target: "node22",
          banner: { js: NODE_BANNER },
          plugins: [platformResolver("node"), ...checks],
        };
  const result = await esbuild
    .build({
      stdin: {
        contents: entrySource(entry, capabilities, target),
        resolveDir: projectDir,
        sourcefile: "platform-entry.js",
        loader: "js",
      },
      absWorkingDir: projectDir,
      bundle: true,
      format: "esm",
      nodePaths: [REPO_NODE_MODULES],
      ...runtime,
      metafile: true,
      write,
      outfile,
      logLevel: "silent",
      legalComments: "none",
      // Sources are read from disk when a stack is mapped; the map stays small.
      ...(sourceMap ? { sourcemap: sourceMap === "external" ? "external" : "linked", sourcesContent: false } : {}),
    })
    .catch(async (error: unknown) => {
      throw await buildFailureFrom(projectDir, error);
    });
  const fatal = fatalWarnings(projectDir, result.warnings);
  if (fatal.length) throw await buildFailure(projectDir, fatal);
  return result;
}

/** The bundle's entry in esbuild's metafile (with a source map, `outputs` also lists the `.map`). */
function bundleOutput(metafile: esbuild.Metafile, projectDir: string, bundlePath: string) {
  return metafile.outputs[path.relative(projectDir, bundlePath).split(path.sep).join("/")];
}

/**
 * Bundles a project into one module: a worker module (default), or with
 * `{ target: "node" }` an ES module for a plain Node process. A first pass
 * finds out which capabilities the project's code reaches; the second adds
 * what only those capabilities need (the Durable Object classes for a
 * worker, the node:sqlite workflow backend for Node).
 */
export async function buildProject(
  projectDir: string,
  outDir = path.join(projectDir, ".platform", "build"),
  options: BuildOptions = {},
): Promise<ProjectBuild> {
  const target = options.target ?? "worker";
  refuseLinksOutOfProject(projectDir, outDir);
  const entry = findProjectEntry(projectDir);
  const bundlePath = path.join(outDir, target === "worker" ? "worker.js" : "project.mjs");
  const probe = await bundle(projectDir, entry, { workflow: false }, bundlePath, false, target, false);
  const inputs = Object.keys(probe.metafile.inputs).map((p) => path.resolve(projectDir, p));
  // Files esbuild read but tree-shook away do not count: only code that reached the bundle.
  const bundled = Object.entries(bundleOutput(probe.metafile, projectDir, bundlePath)?.inputs ?? {})
    .filter(([, use]) => use.bytesInOutput > 0)
    .map(([p]) => path.resolve(projectDir, p));
  const capabilities: ProjectCapabilities = { workflow: bundled.includes(WORKFLOW_CAPABILITY) };

  await mkdir(outDir, { recursive: true });
  const result = await bundle(projectDir, entry, capabilities, bundlePath, true, target, options.sourceMap ?? false);
  const output = bundleOutput(result.metafile, projectDir, bundlePath);
  const bundleBytes = output?.bytes ?? 0;
  const bytesBySource = Object.fromEntries(
    Object.entries(output?.inputs ?? {})
      .filter(([, use]) => use.bytesInOutput > 0)
      .map(([p, use]) => [path.resolve(projectDir, p), use.bytesInOutput]),
  );
  return {
    target,
    projectDir,
    entry,
    outDir,
    bundlePath,
    bundleBytes,
    capabilities,
    durableObjects: capabilities.workflow && target === "worker" ? Object.keys(PROJECT_DURABLE_OBJECTS) : [],
    inputs: inputs.filter((p) => !p.includes(`${path.sep}node_modules${path.sep}`)),
    bytesBySource,
  };
}

export async function writeMetadata(build: ProjectBuild, metadata: Record<string, unknown>): Promise<string> {
  const file = path.join(build.outDir, "metadata.json");
  const full = {
    entry: path.relative(build.projectDir, build.entry),
    bundle: path.relative(build.projectDir, build.bundlePath),
    bundleBytes: build.bundleBytes,
    capabilities: build.capabilities,
    durableObjects: build.durableObjects,
    ...metadata,
  };
  await writeFile(file, JSON.stringify(full, null, 2) + "\n");
  return file;
}
