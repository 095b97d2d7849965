import {
  abortAllDurableObjects,
  applyD1Migrations,
  env,
  evictDurableObject,
  reset,
  runInDurableObject,
} from "cloudflare:test";
import { describe, expect, it } from "vitest";

// What test/support/workerd/applyMigrations.ts promises every workerd test: the migrated schema, and no
// actor storage from an earlier test, however the actor was left (running, aborted as a restart does,
// evicted as an idle actor is). It wakes only the actors constructed since the last reset; these tests run in order and
// fail if an actor that wrote were missed.
const actor = (name: string) => env.WORKFLOW_RUNS.get(env.WORKFLOW_RUNS.idFromName(`reset-probe:${name}`));
const write = (name: string) => runInDurableObject(actor(name), (_, state) => state.storage.put("probe", name));
const read = (name: string) => runInDurableObject(actor(name), (_, state) => state.storage.get<string>("probe"));

const LEFT = ["running", "aborted", "evicted", "reused"] as const;

describe("the reset before each workerd test", () => {
  it("(first) actors write and are left running, aborted or evicted", async () => {
    for (const name of LEFT) await write(name);
    await evictDurableObject(actor("evicted"));
    await abortAllDurableObjects();
    await write("running");
    expect(await read("running")).toBe("running");
  });

  it.each(LEFT)("(second) the actor left %s holds nothing", async (name) => {
    expect(await read(name)).toBeUndefined();
  });

  it("(third) an actor of an earlier test writes again and is aborted", async () => {
    await write("reused");
    await abortAllDurableObjects();
  });

  it("(fourth) its second write is gone too", async () => {
    expect(await read("reused")).toBeUndefined();
  });

  it("applies the migrations to the schema and d1_migrations rows applyD1Migrations makes", async () => {
    const schema = async () => ({
      // Each object's SQL without spaces or quotes: applyD1Migrations writes its own table's over several lines.
      objects: (
        await env.DB.prepare("SELECT type, name, sql FROM sqlite_master ORDER BY name").all<{ sql: string | null }>()
      ).results.map((o) => ({ ...o, sql: o.sql?.replace(/[\s"]/g, "") })),
      applied: (await env.DB.prepare("SELECT id, name FROM d1_migrations ORDER BY id").all()).results,
    });
    const inOneBatch = await schema();
    expect(inOneBatch.applied.map((row) => row.name)).toEqual(env.TEST_MIGRATIONS.map((m) => m.name));
    await reset();
    await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
    expect(await schema()).toEqual(inOneBatch);
  });
});
