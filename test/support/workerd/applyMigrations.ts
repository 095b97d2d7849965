import { applyD1Migrations, env, reset } from "cloudflare:test";
import { beforeEach } from "vitest";

// Every test starts from an empty database with the real schema (the same
// migrations `platform dev` applies).
//
// Local D1 is a Durable Object, and reset() (workerd's deleteAllDurableObjects)
// wipes only the objects running at that moment: a database evicted while idle,
// or aborted by abortAllDurableObjects(), keeps every row into the next test.
// A query first makes it run; the check after says so if reset() ever leaves tables again.
beforeEach(async () => {
  await env.DB.prepare("SELECT 1").first();
  await reset();
  const left = await env.DB.prepare(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'd1_migrations'",
  ).all();
  if (left.results.length) throw new Error("reset() left the previous test's D1 tables behind.");
  await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
});
