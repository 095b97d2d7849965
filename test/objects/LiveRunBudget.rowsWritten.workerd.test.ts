/**
 * What the account's live-run budget costs on Cloudflare's meter (issue 35): each run started under
 * the platform holds a slot and gives it back, so the `LiveRunBudget` actor's rows are part of a
 * run's cost. Counted by the runtime's own cursors (src/objects/storageMeter.ts).
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { accountLiveRunBudget, type LiveRunBudget } from "#src/objects/LiveRunBudget.ts";
import { readStorageMeter, resetStorageMeter } from "#src/objects/storageMeter.ts";

const namespace = (env as unknown as { LIVE_RUN_BUDGET: DurableObjectNamespace<LiveRunBudget> }).LIVE_RUN_BUDGET;

// Each call follows the one before, on one account; `rows` is what it writes.
const CALLS: { call: string; run: (budget: LiveRunBudget) => unknown; rows: number }[] = [
  { call: "hold one run", run: (b) => b.hold(1, ["run-a"], 10), rows: 1 },
  { call: "hold it again (a retried start)", run: (b) => b.hold(1, ["run-a"], 10), rows: 0 },
  { call: "hold a fan-out of three", run: (b) => b.hold(1, ["run-b", "run-c", "run-d"], 10), rows: 3 },
  { call: "release the first run", run: (b) => b.release(1, ["run-a"]), rows: 1 },
  { call: "release it again (a duplicate end report)", run: (b) => b.release(1, ["run-a"]), rows: 0 },
  { call: "another project releases a run it does not hold", run: (b) => b.release(2, ["run-b"]), rows: 0 },
];

describe("LiveRunBudget: rows written per call", () => {
  it("writes one row per run held and one per run released, nothing for a repeat", async () => {
    const stub = accountLiveRunBudget(namespace, 35_001);
    const written = await runInDurableObject(stub, (budget: LiveRunBudget) =>
      CALLS.map(({ call, run }) => {
        resetStorageMeter();
        run(budget);
        return { call, rows: readStorageMeter().rowsWritten };
      }),
    );
    expect(written).toEqual(CALLS.map(({ call, rows }) => ({ call, rows })));
  });

  it("reads the rows of the ids it is asked about, not every live run", async () => {
    const stub = accountLiveRunBudget(namespace, 35_002);
    const read = await runInDurableObject(stub, (budget: LiveRunBudget) => {
      budget.hold(
        1,
        Array.from({ length: 300 }, (_, i) => `live-${i}`),
        1_000,
      );
      resetStorageMeter();
      budget.hold(1, ["one-more"], 1_000);
      budget.release(1, ["one-more"]);
      return readStorageMeter().rowsRead;
    });
    expect(read).toBeLessThan(10);
  });
});
