import type { StoredEventOf } from "./events.ts";

/**
 * Delay between attempts of a failed step: exponential, capped, jittered.
 * Defaults live in `WORKFLOW_DEFAULTS.backoff` (definition.ts).
 */
export interface BackoffOptions {
  /** Delay after the first failed attempt, in ms. */
  initialMS: number;
  /** Multiplier per further attempt (>= 1). */
  factor: number;
  /** Upper bound of any delay, in ms; jitter never pushes a delay above it. */
  maxMS: number;
  /** Relative spread in [0, 1]: 0.2 spreads a delay over ±20 %. */
  jitter: number;
}

export interface RetryKey {
  runId: string;
  step: string;
  /** The attempt that failed (from 1). */
  attempt: number;
}

/**
 * The wait after `attempt` failed: `min(maxMS, initialMS * factor^(attempt-1))`,
 * spread by ±jitter and capped again at maxMS, rounded to whole ms.
 *
 * The jitter is deterministic in (runId, step, attempt), so anyone holding the
 * step_failed event (an executor after a restart, the recovery sweep) computes
 * the same retry time without it being stored in the event.
 */
export function retryDelayMS(backoff: BackoffOptions, key: RetryKey): number {
  const exponent = Math.max(0, key.attempt - 1);
  // initialMS 0 stays 0 (0 * Infinity would be NaN for huge exponents).
  const grown = backoff.initialMS === 0 ? 0 : backoff.initialMS * backoff.factor ** exponent;
  const base = Math.min(backoff.maxMS, grown);
  const spread = backoff.jitter * (2 * jitterUnit(key) - 1);
  return Math.round(Math.min(backoff.maxMS, Math.max(0, base * (1 + spread))));
}

/**
 * When the step (or rollback) that failed in `failed` may be attempted again: the time the step asked
 * for (`retry_at`), else after the backoff.
 */
export function retryAt(
  failed: StoredEventOf<"step_failed"> | StoredEventOf<"rollback_failed">,
  backoff: BackoffOptions,
): number {
  if (failed.type === "rollback_failed")
    return (
      failed.at +
      retryDelayMS(backoff, {
        runId: failed.runId,
        step: `rollback:${failed.payload.step}`,
        attempt: failed.payload.attempt,
      })
    );
  if (failed.payload.retry_at !== undefined) return failed.payload.retry_at;
  return (
    failed.at +
    retryDelayMS(backoff, { runId: failed.runId, step: failed.payload.step, attempt: failed.payload.attempt })
  );
}

/** A number in [0, 1) fixed by the key: FNV-1a hash seeding one round of mulberry32. */
export function jitterUnit(key: RetryKey): number {
  const text = `${key.runId}\u0000${key.step}\u0000${key.attempt}`;
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  let t = (hash + 0x6d2b79f5) | 0;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
