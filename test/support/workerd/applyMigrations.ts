import { env, evictAllDurableObjects, listDurableObjectIds, reset, runInDurableObject } from "cloudflare:test";
import { afterAll, beforeEach } from "vitest";
import { actorsToWake, forgetConstructedActors } from "./constructedActors.ts";

// Every test starts from an empty database with the real schema (the same
// migrations `platform dev` applies, in one batch).
//
// Local D1 is a Durable Object, and reset() (workerd's deleteAllDurableObjects)
// wipes only the objects running at that moment: a database evicted while idle,
// or aborted by abortAllDurableObjects(), keeps every row into the next test,
// and so would an idle actor (a rate limiter's counts, say). A query first makes
// D1 run and every actor that may hold storage is woken. Then every actor is
// evicted, so the next test's actors are all constructed anew, which is how the
// next reset knows them. Should reset() ever leave tables again, the
// migrations' first statement (CREATE TABLE d1_migrations) fails and says so.
beforeEach(async () => {
  await wipeStorage();
  await applyMigrationsInOneBatch();
});

// The files share one runtime (`isolate: false`): what a file's last test made is wiped after it, so
// the next file does not pay for it in its first test.
afterAll(wipeStorage);

async function wipeStorage(): Promise<void> {
  await env.DB.prepare("SELECT 1").first();
  await wakeActorsThatMayHoldStorage();
  await reset();
  await evictAllDurableObjects();
  forgetConstructedActors();
}

/**
 * The migrations, recorded in `d1_migrations` as applyD1Migrations records them, in one D1 batch rather
 * than one per migration: a call to local D1 costs milliseconds, and this runs before every test. The
 * batch is one transaction, and its first statement fails on a database that reset() did not empty.
 */
async function applyMigrationsInOneBatch(): Promise<void> {
  const record = env.DB.prepare("INSERT INTO d1_migrations (name) VALUES (?)");
  await env.DB.batch([
    env.DB.prepare(
      "CREATE TABLE d1_migrations (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL)",
    ),
    ...env.TEST_MIGRATIONS.flatMap((migration) => [
      ...migration.queries.map((query) => env.DB.prepare(query)),
      record.bind(migration.name),
    ]),
  ]).catch((error: unknown) => {
    if (/table d1_migrations already exists/.test(String(error)))
      throw new Error("reset() left the previous test's D1 tables behind.", { cause: error });
    throw error;
  });
}

/**
 * The Durable Objects of the harness's own namespaces that may hold storage (constructedActors.ts),
 * running (their storage is then wiped by reset()). A binding that only looks like a namespace (a
 * proxy of another worker's) is skipped.
 */
async function wakeActorsThatMayHoldStorage(): Promise<void> {
  const namespaces = Object.values(env).filter(
    (value): value is DurableObjectNamespace => typeof value === "object" && value !== null && "idFromName" in value,
  );
  // Every namespace at once: this runs before every test, and each listing is a call to the runtime.
  await Promise.all(namespaces.map(wakeListedActors));
}

async function wakeListedActors(namespace: DurableObjectNamespace): Promise<void> {
  let ids: DurableObjectId[];
  try {
    ids = await listDurableObjectIds(namespace);
  } catch {
    return;
  }
  await Promise.all(actorsToWake(ids).map((id) => runInDurableObject(namespace.get(id), () => {})));
}
