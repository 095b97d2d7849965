import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { createMemoryEventStore } from "#src/engine/storage/memoryEventStore.ts";
import { createSqlBulkOperationLog } from "#src/engine/storage/sqlBulkOperations.ts";
import { createSqlEventStore } from "#src/engine/storage/sqlEventStore.ts";
import { nodeSyncSql } from "#src/runtime/node/nodeSyncSql.ts";
import { type FaultedStore, runSeed } from "#test/support/workflow/storageFaultWorkload.ts";
import { type FaultSwitch, faultyStore, faultySql } from "#test/support/workflow/storageFaults.ts";

/**
 * The engine under storage faults on the in-memory store and on node:sqlite
 * (event log and run index): every write may fail, before it lands or after
 * (committed, caller told otherwise), by a seeded schedule
 * (test/support/workflow/storageFaultWorkload.ts). The Durable Object
 * storage's run is test/objects/storageFaults.long.workerd.test.ts.
 * `FAULT_SEEDS=2000` runs more; `FAULT_SEED=17` replays one.
 */

const BACKENDS: [string, (faults: FaultSwitch) => FaultedStore][] = [
  ["memory store", (faults) => faultyStore(createMemoryEventStore(), faults)],
  [
    "node:sqlite store",
    (faults) => {
      const sql = faultySql(nodeSyncSql(new DatabaseSync(":memory:")), faults);
      return { ...createSqlEventStore(sql), ...createSqlBulkOperationLog(sql) };
    },
  ],
];

const seeds = Number(process.env.FAULT_SEEDS ?? 200);
/** `FAULT_SEED=17` replays that one seed. */
const firstSeed = Number(process.env.FAULT_SEED ?? 1);
const lastSeed = process.env.FAULT_SEED ? firstSeed : seeds;

describe.each(BACKENDS)("the engine under storage faults: %s", (_name, makeStore) => {
  it(`keeps every promise over fault seeds ${firstSeed} to ${lastSeed}`, async () => {
    let injected = 0;
    for (let seed = firstSeed; seed <= lastSeed; seed++) {
      const switches: FaultSwitch[] = [];
      const broken = await runSeed((faults) => {
        switches.push(faults);
        return makeStore(faults);
      }, seed);
      injected += switches.reduce((sum, s) => sum + s.injected.before + s.injected.after, 0);
      expect(broken, `seed ${seed} (replay: FAULT_SEED=${seed})`).toEqual([]);
    }
    // The schedule really injected faults.
    expect(injected).toBeGreaterThan(lastSeed - firstSeed);
  }, 120_000);
});
