import { readdir, readFile } from "node:fs/promises";
import path from "node:path";

interface D1Like {
  exec(sql: string): Promise<unknown>;
  prepare(sql: string): {
    bind(...values: unknown[]): { run(): Promise<unknown>; all<T>(): Promise<{ results: T[] }> };
    all<T>(): Promise<{ results: T[] }>;
  };
}

/**
 * Applies `migrations/*.sql` in name order, recording each in `d1_migrations`
 * (the table wrangler uses), so `wrangler d1 migrations apply` and
 * `platform dev` agree on what has run.
 */
export async function applyD1Migrations(db: D1Like, migrationsDir: string): Promise<string[]> {
  await db.exec(
    "CREATE TABLE IF NOT EXISTS d1_migrations (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL)",
  );
  const { results } = await db.prepare("SELECT name FROM d1_migrations").all<{ name: string }>();
  const applied = new Set(results.map((r) => r.name));
  const files = (await readdir(migrationsDir)).filter((f) => f.endsWith(".sql")).sort();
  const ran: string[] = [];
  for (const file of files) {
    if (applied.has(file)) continue;
    const sql = await readFile(path.join(migrationsDir, file), "utf8");
    // D1's exec takes one statement per line; collapse each statement onto one.
    const statements = sql
      .split("\n")
      .filter((line) => !line.trim().startsWith("--"))
      .join("\n")
      .split(";")
      .map((s) => s.replace(/\s+/g, " ").trim())
      .filter(Boolean);
    for (const statement of statements) await db.exec(statement);
    await db.prepare("INSERT INTO d1_migrations (name) VALUES (?)").bind(file).run();
    ran.push(file);
  }
  return ran;
}
