import * as esbuild from "esbuild";
import path from "node:path";
import { REPO_ROOT } from "../repoPaths.ts";

/** The platform's own workers, by name → entry. Plugin workers join as they land. */
export const PLATFORM_WORKERS = {
  gateway: "src/workers/gateway/index.ts",
  api: "src/workers/api/index.ts",
  login: "src/workers/login/index.ts",
} as const;

export type PlatformWorkerName = keyof typeof PLATFORM_WORKERS;

/** Bundles each platform worker into `outDir/<name>.js`, as wrangler would for a deploy. */
export async function buildPlatformWorkers(outDir: string): Promise<Record<PlatformWorkerName, string>> {
  const out = {} as Record<PlatformWorkerName, string>;
  await Promise.all(
    Object.entries(PLATFORM_WORKERS).map(async ([name, entry]) => {
      const outfile = path.join(outDir, `${name}.js`);
      await esbuild.build({
        entryPoints: [path.join(REPO_ROOT, entry)],
        bundle: true,
        format: "esm",
        platform: "browser",
        conditions: ["workerd", "worker", "browser"],
        target: "es2023",
        external: ["cloudflare:*", "node:*"],
        outfile,
        logLevel: "silent",
      });
      out[name as PlatformWorkerName] = outfile;
    }),
  );
  return out;
}
