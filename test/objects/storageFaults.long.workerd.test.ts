import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createSqlBulkOperationLog } from "#src/engine/storage/sqlBulkOperations.ts";
import { createSqlEventStore } from "#src/engine/storage/sqlEventStore.ts";
import { durableObjectSql } from "#src/objects/durableObjectSql.ts";
import { runSeed } from "#test/support/workflow/storageFaultWorkload.ts";
import { type FaultSwitch, faultySql } from "#test/support/workflow/storageFaults.ts";

/**
 * The engine under storage faults on a Durable Object's own SQLite storage
 * (`transactionSync`, as the run actors use it): the same seeded workload as
 * the Node stores' (test/engine/storage/storageFaults.test.ts), one fresh actor's
 * storage per seed. What it does not cover: faults inside workerd's storage
 * layer itself. Failed actor RPCs: test/objects/actorRpcFaults.long.workerd.test.ts.
 * Its 200 seeds take half a minute, so it is in `npm run test:long` (CI runs
 * it); the same workload on the Node stores runs in `npm test`.
 */
const seeds = 200;
/** The fault switches of the seed under way (one per store it opened), to count what they injected. */
const injectedBy: FaultSwitch[] = [];

describe("the engine under storage faults: a Durable Object's SQLite storage", () => {
  it(`keeps every promise over fault seeds 1 to ${seeds}`, async () => {
    let injected = 0;
    for (let seed = 1; seed <= seeds; seed++) {
      const stub = env.WORKFLOW_RUNS.get(env.WORKFLOW_RUNS.idFromName(`storage-faults-${seed}`));
      const broken = await runInDurableObject(stub, async (_instance, state) => {
        const base = durableObjectSql(state.storage);
        return runSeed((faults) => {
          const sql = faultySql(base, faults);
          injectedBy.push(faults);
          return { ...createSqlEventStore(sql), ...createSqlBulkOperationLog(sql) };
        }, seed);
      });
      injected += injectedBy.splice(0).reduce((sum, s) => sum + s.injected.before + s.injected.after, 0);
      expect(broken, `seed ${seed}`).toEqual([]);
    }
    expect(injected).toBeGreaterThan(seeds);
  }, 300_000);
});
