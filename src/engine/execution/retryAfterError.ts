import { brandError, errorKindOf, isPlatformError } from "../../core/errors.ts";

/**
 * Throw this from a step to have its next attempt run after
 * `retryAfterMS` instead of the backoff (e.g. an API answered "retry in 55 s").
 * It still counts as a failed attempt: once `maxAttempts` is used up the run
 * fails as with any other error.
 * @example
 * const response = await fetch(url);
 * if (response.status === 429) throw new RetryAfterError("rate limited", Number(response.headers.get("Retry-After")) * 1000);
 */
export class RetryAfterError extends Error {
  readonly retryAfterMS: number;

  constructor(message: string, retryAfterMS: number, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "RetryAfterError";
    this.retryAfterMS = retryAfterMS;
    brandError(this, "RetryAfterError");
  }
}

/** The longest wait a step may ask for: the longest backoff a definition may have (24 h). */
export const MAX_RETRY_AFTER_MS = 86_400_000;

/**
 * The delay a step's error asks for before its next attempt, or undefined
 * (use the backoff): a RetryAfterError (known by its brand, in case a
 * bundle holds two copies of the runtime), or a PlatformError `rate_limited`
 * with `details.retryAfterSeconds` (what plugin calls throw). Clamped to
 * [0, {@link MAX_RETRY_AFTER_MS}]; a delay that is not a finite number is ignored.
 */
export function retryAfterMSOf(error: unknown): number | undefined {
  let ms: unknown;
  if (errorKindOf(error) === "RetryAfterError") {
    ms = (error as { retryAfterMS?: unknown }).retryAfterMS;
  } else if (isPlatformError(error) && error.code === "rate_limited") {
    const seconds = (error.details as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
    ms = typeof seconds === "number" ? seconds * 1000 : undefined;
  }
  if (typeof ms !== "number" || !Number.isFinite(ms)) return undefined;
  return Math.round(Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms)));
}
