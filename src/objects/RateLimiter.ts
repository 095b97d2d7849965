import { DurableObject } from "cloudflare:workers";

/** One bucket to take from: at most `limit` takes in any `windowMS` window. */
export interface RateTake {
  bucket: string;
  limit: number;
  windowMS: number;
}

export interface RateDecision {
  allowed: boolean;
  /** 0 when allowed; otherwise whole seconds until the oldest take leaves the window (at least 1). */
  retryAfterSeconds: number;
  /** The bucket that refused (when not allowed). */
  bucket?: string;
}

/**
 * One actor per account (`account:<owner id>`, see accountRateLimits.ts): its
 * projects' proxy rate counters and the account's own;
 * and one per shared budget (e.g. "chatserver-bot", the shared bot's calls
 * across all projects), which can also hold a provider's "wait until" record.
 * A sliding window of take timestamps per bucket lives in the actor's SQLite.
 * The actor is single-threaded and every method is synchronous SQL, so no two
 * takes interleave: the limit is exact under any concurrency.
 */
export class RateLimiter extends DurableObject {
  readonly #sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env as never);
    this.#sql = ctx.storage.sql;
    this.#sql.exec("CREATE TABLE IF NOT EXISTS takes (bucket TEXT NOT NULL, at INTEGER NOT NULL)");
    this.#sql.exec("CREATE INDEX IF NOT EXISTS takes_by_bucket ON takes (bucket, at)");
    this.#sql.exec("CREATE TABLE IF NOT EXISTS pauses (name TEXT PRIMARY KEY, until INTEGER NOT NULL)");
  }

  /** Takes one from `bucket` if fewer than `limit` takes happened in the last `windowMS`. */
  take(bucket: string, limit: number, windowMS: number): RateDecision {
    return this.takeAll([{ bucket, limit, windowMS }]);
  }

  /** Takes one from every bucket, or from none: a refused bucket leaves the others untouched. */
  takeAll(takes: RateTake[], now: number = Date.now()): RateDecision {
    let refusal: RateDecision | null = null;
    for (const { bucket, limit, windowMS } of takes) {
      this.#sql.exec("DELETE FROM takes WHERE bucket = ? AND at <= ?", bucket, now - windowMS);
      const rows = this.#sql
        .exec<{ n: number; oldest: number | null }>(
          "SELECT COUNT(*) AS n, MIN(at) AS oldest FROM takes WHERE bucket = ?",
          bucket,
        )
        .one();
      if (rows.n >= limit) {
        const waitMS = (rows.oldest ?? now) + windowMS - now;
        const retryAfterSeconds = Math.max(1, Math.ceil(waitMS / 1000));
        if (!refusal || retryAfterSeconds > refusal.retryAfterSeconds)
          refusal = { allowed: false, retryAfterSeconds, bucket };
      }
    }
    if (refusal) return refusal;
    for (const { bucket } of takes) this.#sql.exec("INSERT INTO takes (bucket, at) VALUES (?, ?)", bucket, now);
    return { allowed: true, retryAfterSeconds: 0 };
  }

  /** Records that a provider asked every caller to wait until `untilMS` (of two records, the later end holds). */
  pause(name: string, untilMS: number): void {
    this.#sql.exec(
      "INSERT INTO pauses (name, until) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET until = MAX(until, excluded.until)",
      name,
      untilMS,
    );
  }

  /** `takeAll`, unless a `pause(name, …)` reaches past `now`: then refused (taking nothing) until it ends. */
  takeAllUnlessPaused(name: string, takes: RateTake[], now: number = Date.now()): RateDecision {
    const paused = this.#sql.exec<{ until: number }>("SELECT until FROM pauses WHERE name = ?", name).toArray()[0];
    if (paused && paused.until > now) {
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((paused.until - now) / 1000)), bucket: name };
    }
    return this.takeAll(takes, now);
  }
}
