import { convertV4MiniflareOptions, Miniflare } from "../../cloudflare/miniflareModule.ts";
import { randomBytes } from "node:crypto";
import { INTERNAL_HEADER, signRequestToken } from "../../../core/requestToken.ts";
import { COMPATIBILITY_DATE, COMPATIBILITY_FLAGS } from "../../../contracts/workerCompatibility.ts";
import type { ProjectBuild } from "./buildProject.ts";

type FetchLike = (
  url: string,
  init: { headers: Record<string, string> },
) => Promise<{ ok: boolean; status: number; json(): Promise<unknown>; text(): Promise<string> }>;

/** Asks a running project worker what it registered (crons, workflows, handlers) through its internal metadata route. */
export async function fetchProjectMetadata(
  fetch: FetchLike,
  projectId: string | number,
  secret: string,
): Promise<Record<string, unknown>> {
  const pathAndQuery = "/__platform/metadata";
  const token = await signRequestToken("internal", { method: "GET", pathAndQuery, body: null }, { projectId, secret });
  const response = await fetch(`http://project.internal${pathAndQuery}`, { headers: { [INTERNAL_HEADER]: token } });
  if (!response.ok)
    throw new Error(`The project did not report its metadata (${response.status}): ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}

/**
 * Evaluates a bundle in workerd (the runtime it is built for) just long
 * enough to read what its top-level code registered.
 */
export async function extractMetadata(build: ProjectBuild): Promise<Record<string, unknown>> {
  const secret = randomBytes(32).toString("hex");
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      name: "project",
      modules: true,
      scriptPath: build.bundlePath,
      modulesRoot: build.outDir,
      compatibilityDate: COMPATIBILITY_DATE,
      compatibilityFlags: [...COMPATIBILITY_FLAGS],
      bindings: { PLATFORM_WORKER_SECRET: secret, PLATFORM_PROJECT_ID: "0", PLATFORM_LOCAL: "1" },
      cf: false,
    }),
  );
  try {
    const worker = await mf.getWorker();
    return await fetchProjectMetadata((url, init) => worker.fetch(url, init) as never, "0", secret);
  } finally {
    await mf.dispose();
  }
}
