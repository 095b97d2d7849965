import type { WorkflowRunView } from "../../../engine/execution/describeRun.ts";
import type { StreamBatch } from "../../../engine/streams/liveRunStream.ts";
import type { RunListPage } from "../../../engine/storage/store.ts";
import { callPlatformApi, resolvePlatformTarget } from "../platformTarget.ts";
import { resolveRunId } from "./resolveRunId.ts";
import { parseWatchInvocation, watchRun } from "./watchRun.ts";

/** `platform workflow watch <run> [--from N] [--topic T]`: through the platform API, as every workflow command. */
export async function watchCommand(
  positionals: readonly string[],
  values: Record<string, string | boolean | undefined>,
): Promise<number> {
  const invocation = parseWatchInvocation(positionals, values);
  const target = resolvePlatformTarget(values);
  const runs = `/projects/${encodeURIComponent(target.slug)}/workflows`;
  const getRun = (runId: string) =>
    callPlatformApi<WorkflowRunView>(target, "GET", `${runs}/${encodeURIComponent(runId)}`);
  const { runId } = await resolveRunId(invocation.run, getRun, (cursor) =>
    callPlatformApi<RunListPage>(
      target,
      "GET",
      `${runs}?${new URLSearchParams({ limit: "100", ...(cursor ? { cursor } : {}) })}`,
    ),
  );
  return watchRun(
    invocation,
    {
      readBatch: (from, topics) => {
        const query = new URLSearchParams({ from: String(from) });
        for (const topic of topics) query.append("topic", topic);
        return callPlatformApi<StreamBatch>(target, "GET", `${runs}/${encodeURIComponent(runId)}/stream?${query}`);
      },
      view: () => getRun(runId),
    },
    (text) => process.stdout.write(text),
  );
}
