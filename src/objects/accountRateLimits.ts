import { PlatformError } from "../core/errors.ts";
import type { RateLimiter, RateTake } from "./RateLimiter.ts";

/**
 * Where the per-project and per-account counters live: one `RateLimiter`
 * actor per account (`account:<owner id>`) holds its projects' buckets
 * (`project:<id>:<bucket>`) and the account's own (`account:<bucket>`), so a
 * request takes from its project's limit and its account's in one step, all
 * or none, and adding projects to an account does not add quota.
 *
 * The account limits (on top of every per-project limit):
 *
 * | what | per project | per account (all its projects together) |
 * |---|---|---|
 * | email sends | 3 per 60 s | 10 per 60 s |
 * | workflow executions (`POST /internal/workflow/execute`) | 60 per 10 s | 120 per 10 s |
 */
export const ACCOUNT_RATE_LIMITS = {
  email: { limit: 10, windowMS: 60_000, what: "email sends" },
  "workflow-execute": { limit: 120, windowMS: 10_000, what: "workflow executions" },
} as const;

export type AccountLimit = keyof typeof ACCOUNT_RATE_LIMITS;

/** The project and account whose counters a take spends. */
export interface QuotaOwner {
  /** The project's id. */
  id: number;
  /** The account that owns it (`projects.owner_id`). */
  owner_id: number;
}

/** The actor that counts everything of `owner`'s account. */
export function accountRateLimiter(namespace: DurableObjectNamespace<RateLimiter>, owner: QuotaOwner) {
  return namespace.get(namespace.idFromName(`account:${owner.owner_id}`));
}

/** A project's own bucket inside its account's actor. */
export function projectTake(owner: QuotaOwner, bucket: string, limit: number, windowMS: number): RateTake {
  return { bucket: `project:${owner.id}:${bucket}`, limit, windowMS };
}

/** The account's share of `limit`, taken together with the project's. */
export function accountTake(limit: AccountLimit): RateTake {
  return { bucket: `account:${limit}`, ...ACCOUNT_RATE_LIMITS[limit] };
}

/** The account limit a refused take names, or `null` when the refusal was a project's own bucket. */
export function refusedAccountLimit(bucket: string | undefined): AccountLimit | null {
  const name = bucket?.startsWith("account:") ? bucket.slice("account:".length) : null;
  return name !== null && Object.hasOwn(ACCOUNT_RATE_LIMITS, name) ? (name as AccountLimit) : null;
}

/**
 * The 429 for a take refused at an account limit: `rate_limited`, a message
 * that says it is the account's limit with its numbers, and `details`
 * `{ retryAfterSeconds, bucket, scope: "account", limit, windowSeconds }`.
 */
export function accountLimitError(limit: AccountLimit, retryAfterSeconds: number): PlatformError {
  const { limit: count, windowMS, what } = ACCOUNT_RATE_LIMITS[limit];
  return new PlatformError(
    "rate_limited",
    `Account rate limit reached: the account that owns this project may make ${count} ${what} per ${windowMS / 1000} seconds across all its projects together (the account's limit, not this project's). Retry in ${retryAfterSeconds} s.`,
    { retryAfterSeconds, bucket: limit, scope: "account", limit: count, windowSeconds: windowMS / 1000 },
  );
}
