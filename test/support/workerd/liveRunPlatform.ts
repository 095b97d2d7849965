import { createExecutionContext } from "cloudflare:test";
import type { LiveRunSlotsEnv } from "#src/objects/liveRunSlots.ts";
import api from "#src/workers/api/index.ts";
import type { ApiEnv } from "#src/workers/api/env.ts";
import type { ProjectRow } from "#src/workers/db/projectsTable.ts";

/**
 * The bindings a project's worker asks its live-run slots with (objects/liveRunSlots.ts):
 * `PLATFORM_API` is the real API worker over `apiEnv` (e.g. with a small
 * `MAX_LIVE_RUNS_PER_ACCOUNT`), the secret and id are the project's own. `calls` lists the
 * paths asked, in order.
 */
export function liveRunPlatform(
  project: Pick<ProjectRow, "id" | "worker_secret">,
  apiEnv: ApiEnv,
): LiveRunSlotsEnv & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    PLATFORM_WORKER_SECRET: project.worker_secret,
    PLATFORM_PROJECT_ID: String(project.id),
    PLATFORM_API: {
      fetch: (url: string, init: RequestInit) => {
        calls.push(new URL(url).pathname);
        return api.fetch(new Request(url, init), apiEnv, createExecutionContext());
      },
    },
  };
}
