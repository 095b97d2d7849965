import * as esbuild from "esbuild";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { PLATFORM_SERVICES } from "../../../../workers/api/projectScriptBindings.ts";
import { REPO_ROOT } from "../../repoPaths.ts";
import type { DeployedWorker } from "./deployedWorkers.ts";
import { LOCAL_PLUGINS, type LocalPluginId } from "../providers/localPlugins.ts";
import { cacheKey, fileHash, type StartCache, startCache } from "./startCache.ts";

/** `platform dev` only: the API worker with the deployed worker's routes plus the dev-only ones (test events, the local project's record, the outbox). */
const DEV_API_ENTRY = "src/dev/routes/devApiWorker.ts";

/** The fake providers `platform dev` runs beside the plugins, and the actor classes each exports. */
const FAKE_PROVIDERS: Record<LocalPluginId, { entry: string; classes: string[] }> = {
  chatserver: { entry: "src/dev/fakes/chatserver/index.ts", classes: ["FakeChatServerState"] },
  workspace: { entry: "src/dev/fakes/workspace/index.ts", classes: [] },
  email: { entry: "src/dev/fakes/email/index.ts", classes: [] },
};

export interface PlatformScripts {
  /** Each deployed worker's bundle, by its name. */
  workers: Record<string, string>;
  /** Each fake provider's bundle. */
  fakes: Record<LocalPluginId, string>;
}

/**
 * Bundles each platform worker into `outDir`, as wrangler would for a deploy,
 * from the entry its config names, and each fake provider. A bundle exports
 * its default handler and the actor classes it hosts (its config's Durable
 * Objects without `script_name`): workerd refuses any other module export
 * (the email plugin exports PLUGIN_ID). `devRoutes` (`platform dev`): the
 * API worker from DEV_API_ENTRY; without it (`platform up`), the deployed
 * API worker exactly.
 */
export async function buildPlatformWorkers(
  outDir: string,
  deployed: DeployedWorker[],
  options: { devRoutes: boolean },
): Promise<PlatformScripts> {
  const hostedClasses = (worker: DeployedWorker) =>
    Object.values(worker.options.durableObjects ?? {}).flatMap((binding) =>
      typeof binding === "object" && !binding.scriptName ? [binding.className] : [],
    );
  const workers = deployed.map((worker) => ({
    file: worker.name,
    entry:
      options.devRoutes && worker.name === PLATFORM_SERVICES.PLATFORM_API
        ? path.join(REPO_ROOT, DEV_API_ENTRY)
        : worker.main,
    exports: ["default", ...new Set(hostedClasses(worker))],
  }));
  const fakes = Object.entries(FAKE_PROVIDERS).map(([id, fake]) => ({
    file: LOCAL_PLUGINS[id as LocalPluginId].fake,
    entry: path.join(REPO_ROOT, fake.entry),
    exports: ["default", ...fake.classes],
  }));
  const built = await Promise.all(
    [...workers, ...fakes].map(async ({ file, entry, exports }) => {
      const outfile = path.join(outDir, `${file}.js`);
      await bundleWorker(entry, exports, outfile);
      return [file, outfile] as const;
    }),
  );
  const byFile = new Map(built);
  return {
    workers: Object.fromEntries(deployed.map((w) => [w.name, byFile.get(w.name)!])),
    fakes: Object.fromEntries(
      Object.entries(LOCAL_PLUGINS).map(([id, plugin]) => [id, byFile.get(plugin.fake)!]),
    ) as Record<LocalPluginId, string>,
  };
}

/** Bundles the worker module `entry` into `outfile` as wrangler would, exporting only `exports` of it. */
export async function bundleWorker(
  entry: string,
  exports: readonly string[],
  outfile: string,
  cache: StartCache = startCache(),
): Promise<void> {
  const options = {
    stdin: {
      contents: `export { ${exports.join(", ")} } from ${JSON.stringify(entry)};`,
      resolveDir: path.dirname(entry),
      loader: "ts",
    },
    bundle: true,
    format: "esm",
    platform: "browser",
    conditions: ["workerd", "worker", "browser"],
    target: "es2023",
    external: ["cloudflare:*", "node:*"],
    logLevel: "silent",
  } satisfies esbuild.BuildOptions;
  const key = cacheKey("bundle", [esbuild.version, process.cwd(), JSON.stringify(options)]);
  const cached = cachedBundle(cache.read(key));
  if (cached !== null) {
    mkdirSync(path.dirname(outfile), { recursive: true });
    writeFileSync(outfile, cached);
    return;
  }
  const result = await esbuild.build({ ...options, outfile, metafile: true });
  const inputs: BundleInputs = {};
  for (const input of Object.keys(result.metafile.inputs)) {
    if (input === "<stdin>") continue;
    const hash = fileHash(path.resolve(input));
    // An input that is not a plain file (another namespace): the bundle cannot be checked, so it is not kept.
    if (hash === null) return;
    inputs[path.resolve(input)] = hash;
  }
  cache.write(key, JSON.stringify({ inputs, code: readFileSync(outfile, "utf8") } satisfies CachedBundle));
}

/** Each file the bundle was made from, with its content hash when it was made. */
type BundleInputs = Record<string, string>;

interface CachedBundle {
  inputs: BundleInputs;
  code: string;
}

/** The cached bundle's code while every file it was made from is as it was, else null. */
function cachedBundle(text: string | null): string | null {
  if (text === null) return null;
  let cached: CachedBundle;
  try {
    cached = JSON.parse(text) as CachedBundle;
  } catch {
    return null;
  }
  for (const [file, hash] of Object.entries(cached.inputs)) if (fileHash(file) !== hash) return null;
  return cached.code;
}
