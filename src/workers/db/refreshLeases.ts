/**
 * The refresh lease kept in a `plugin_resources` row's metadata
 * (`refreshLease: { holder, until }`), which serialises a single-use refresh
 * token's use per resource. JSON functions touch only the lease and the token
 * keys, so other metadata writes (e.g. /deploy's event list) neither block
 * nor undo it.
 */

/** The token a lease guards: metadata key `tokenField` of resource `resourceId`, now `currentToken`. */
export interface LeasedToken {
  resourceId: number;
  tokenField: string;
  currentToken: string;
}

/**
 * Takes the lease atomically: only while no live lease exists and the stored
 * token (`tokenField`) is still `currentToken` (nobody refreshed in between).
 */
export async function takeRefreshLease(
  db: D1Database,
  { resourceId, tokenField, currentToken }: LeasedToken,
  lease: { holder: string; until: number },
  now: number,
): Promise<boolean> {
  const taken = await db
    .prepare(
      `UPDATE plugin_resources SET metadata = json_set(metadata, '$.refreshLease', json(?))
       WHERE id = ? AND json_extract(metadata, ?) = ?
         AND (json_extract(metadata, '$.refreshLease.until') IS NULL OR json_extract(metadata, '$.refreshLease.until') <= ?)`,
    )
    .bind(JSON.stringify(lease), resourceId, `$.${tokenField}`, currentToken, now)
    .run();
  return (taken.meta.changes ?? 0) === 1;
}

/** Stores the refreshed token and clears the lease in one write, if `holder` still holds it. */
export async function storeTokenAndReleaseLease(
  db: D1Database,
  { resourceId, holder, tokenField, token }: { resourceId: number; holder: string; tokenField: string; token: string },
): Promise<void> {
  await db
    .prepare(
      `UPDATE plugin_resources SET metadata = json_remove(json_set(metadata, ?, ?), '$.refreshLease')
       WHERE id = ? AND json_extract(metadata, '$.refreshLease.holder') = ?`,
    )
    .bind(`$.${tokenField}`, token, resourceId, holder)
    .run();
}

/** Gives the lease up without a new token (the refresh did not happen). */
export async function releaseRefreshLease(db: D1Database, resourceId: number, holder: string): Promise<void> {
  await db
    .prepare(
      "UPDATE plugin_resources SET metadata = json_remove(metadata, '$.refreshLease') WHERE id = ? AND json_extract(metadata, '$.refreshLease.holder') = ?",
    )
    .bind(resourceId, holder)
    .run();
}
