/**
 * What a D1 statement answers, read the same way by every table module: the
 * rows of a query, or how many rows a write changed.
 */

/** The rows `sql` selects with `binds` bound to its `?`s, in the order the SQL gives. */
export async function allRows<Row>(db: D1Database, sql: string, ...binds: unknown[]): Promise<Row[]> {
  const { results } = await db
    .prepare(sql)
    .bind(...binds)
    .all<Row>();
  return results;
}

/** How many rows a write changed (0 when D1 reports none). */
export async function changedRows(statement: D1PreparedStatement): Promise<number> {
  const result = await statement.run();
  return result.meta.changes ?? 0;
}
