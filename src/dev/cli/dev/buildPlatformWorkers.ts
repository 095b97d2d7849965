import * as esbuild from "esbuild";
import path from "node:path";
import { REPO_ROOT } from "../repoPaths.ts";

/**
 * The platform's own workers, by name → entry. Plugin workers and the fake providers `platform dev` runs beside them.
 * The API is the deployed worker's routes plus the dev-only ones (test events, the local project's record).
 */
export const PLATFORM_WORKERS = {
  gateway: "src/workers/gateway/index.ts",
  api: "src/dev/routes/devApiWorker.ts",
  login: "src/workers/login/index.ts",
  pluginChatserver: "src/plugins/chatserver/index.ts",
  pluginWorkspace: "src/plugins/workspace/index.ts",
  pluginEmail: "src/plugins/email-send/index.ts",
  fakeChatserver: "src/dev/fakes/chatserver/index.ts",
  fakeWorkspace: "src/dev/fakes/workspace/index.ts",
  fakeEmail: "src/dev/fakes/email/index.ts",
} as const;

export type PlatformWorkerName = keyof typeof PLATFORM_WORKERS;

/** The actor classes a plugin or fake worker exports beside its default handler (Miniflare binds them by name). */
const EXPORTED_CLASSES: Partial<Record<PlatformWorkerName, string[]>> = {
  pluginChatserver: ["GatewayRelay"],
  fakeChatserver: ["FakeChatServerState"],
};

/** Bundles each platform worker into `outDir/<name>.js`, as wrangler would for a deploy. */
export async function buildPlatformWorkers(outDir: string): Promise<Record<PlatformWorkerName, string>> {
  const out = {} as Record<PlatformWorkerName, string>;
  await Promise.all(
    Object.entries(PLATFORM_WORKERS).map(async ([name, entry]) => {
      const outfile = path.join(outDir, `${name}.js`);
      const entryPath = path.join(REPO_ROOT, entry);
      // workerd refuses a module export that is not a handler or a class (the email plugin exports PLUGIN_ID):
      // plugin and fake workers export only their default handler and their actor classes.
      const onlyDefault = name.startsWith("plugin") || name.startsWith("fake");
      await esbuild.build({
        ...(onlyDefault
          ? {
              stdin: {
                contents: `export { ${["default", ...(EXPORTED_CLASSES[name as PlatformWorkerName] ?? [])].join(", ")} } from ${JSON.stringify(entryPath)};`,
                resolveDir: path.dirname(entryPath),
                loader: "ts" as const,
              },
            }
          : { entryPoints: [entryPath] }),
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
