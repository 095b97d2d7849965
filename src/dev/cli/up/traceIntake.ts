import path from "node:path";
import type { V4WorkerOptions } from "miniflare";
import { bundleWorker } from "../dev/workerd/buildPlatformWorkers.ts";
import type { DeployedWorker } from "../dev/workerd/deployedWorkers.ts";
import { localD1Id } from "../dev/workerd/localWorker.ts";
import { REPO_ROOT } from "../repoPaths.ts";
import { COMPATIBILITY_DATE, COMPATIBILITY_FLAGS } from "../../../contracts/workerCompatibility.ts";

const ENTRY = "src/dev/routes/traceIntakeWorker.ts";
const TRACE_INTAKE_WORKER = "platform-trace-intake";

/**
 * `platform up`'s trace intake in the platform's workerd, on its own socket:
 * bundled like the platform's workers, bound to the API worker's D1 database
 * and its ProjectLog actors (the very ones `platform logs` reads), with the
 * key its tokens are checked with.
 */
export async function traceIntakeWorker(input: {
  outDir: string;
  api: DeployedWorker;
  socket: { host: string; port: number };
  key: string;
}): Promise<V4WorkerOptions> {
  const { api, socket } = input;
  const scriptPath = path.join(input.outDir, `${TRACE_INTAKE_WORKER}.js`);
  await bundleWorker(path.join(REPO_ROOT, ENTRY), ["default"], scriptPath);
  const projectLogs = (api.options.durableObjects as Record<string, unknown> | undefined)?.PROJECT_LOGS;
  if (!projectLogs || typeof projectLogs !== "object")
    throw new Error(`${api.configPath} binds no PROJECT_LOGS actor: the trace intake has no log to write to.`);
  return {
    name: TRACE_INTAKE_WORKER,
    modules: true,
    scriptPath,
    modulesRoot: path.dirname(scriptPath),
    compatibilityDate: COMPATIBILITY_DATE,
    compatibilityFlags: [...COMPATIBILITY_FLAGS],
    bindings: { TRACE_INTAKE_KEY: input.key },
    d1Databases: { DB: localD1Id(api.d1DatabaseNames.DB ?? "DB") },
    durableObjects: { PROJECT_LOGS: { ...(projectLogs as { className: string }), scriptName: api.name } },
    unsafeDirectSockets: [socket],
  };
}
