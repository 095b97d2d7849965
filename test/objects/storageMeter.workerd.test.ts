import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { actorClient } from "#src/objects/actorClient.ts";
import { durableObjectSql } from "#src/objects/durableObjectSql.ts";
import type { WorkflowRunIndexActor } from "#src/objects/WorkflowRunIndexActor.ts";
import { readStorageMeter, resetStorageMeter, setAlarmMetered } from "#src/objects/storageMeter.ts";

// The meter counts what the runtime's own cursors count: a known statement sequence on a table with two
// secondary indexes, read back from `cursor.rowsWritten` / `rowsRead` as Cloudflare bills them.
describe("storageMeter", () => {
  it("counts each statement's rows written (index rows included) and read, and each alarm set", async () => {
    const stub = env.WORKFLOW_RUNS.get(env.WORKFLOW_RUNS.idFromName("meter-probe"));
    await runInDurableObject(stub, async (_instance, state) => {
      const sql = durableObjectSql(state.storage);
      sql.script(
        "CREATE TABLE probe (id INTEGER PRIMARY KEY, a TEXT, b TEXT); CREATE INDEX probe_a ON probe (a); CREATE INDEX probe_b ON probe (b)",
      );
      resetStorageMeter();
      sql.run("INSERT INTO probe (id, a, b) VALUES (1, 'x', 'y')");
      const afterInsert = readStorageMeter();
      sql.run("INSERT INTO probe (id, a, b) VALUES (2, 'x', 'z')");
      sql.all("SELECT * FROM probe");
      await setAlarmMetered(state.storage, Date.now() + 60_000);
      const after = readStorageMeter();
      // One table row and one row in each of the two indexes.
      expect(afterInsert).toEqual({
        rowsRead: afterInsert.rowsRead,
        rowsWritten: 3,
        alarmsSet: 0,
        alarmRuns: 0,
        statements: 1,
        rpcCalls: 0,
        activeMS: 0,
        workerInvocations: 0,
      });
      expect(after.rowsWritten).toBe(6);
      expect(after.rowsRead - afterInsert.rowsRead).toBeGreaterThanOrEqual(2);
      expect(after.alarmsSet).toBe(1);
      expect(after.statements).toBe(3);
      await state.storage.deleteAlarm();
    });
  });

  it("counts each RPC call through an actor client and each alarm run as one request, and times the alarm", async () => {
    const stub = env.WORKFLOW_RUN_INDEX.get(env.WORKFLOW_RUN_INDEX.idFromName("meter-requests"));
    const index = actorClient<WorkflowRunIndexActor>(stub);
    const calls = 5;
    // A clock that moves 1 ms at each reading: an entry timed from its start to its end lasts exactly 1 ms.
    let tick = 0;
    resetStorageMeter(() => tick++);
    for (let i = 0; i < calls; i++) await index.activeRunIds();
    // Arming the alarm from inside the actor is no request; running it is.
    await runInDurableObject(stub, (_instance, state) => setAlarmMetered(state.storage, Date.now() + 60_000));
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const after = readStorageMeter();
    expect({ rpcCalls: after.rpcCalls, alarmRuns: after.alarmRuns, alarmsSet: after.alarmsSet }).toEqual({
      rpcCalls: calls,
      alarmRuns: 1,
      alarmsSet: 1,
    });
    expect(after.rpcCalls + after.alarmRuns).toBe(calls + 1);
    // The alarm is an entry answering a promise: timed. The calls answer at once: no time on workerd's clock.
    expect(after.activeMS).toBe(1);
  });
});
