import { brandError, errorKindOf } from "../../core/errors.ts";

/**
 * Throw this from a step to fail the run at once: the engine writes
 * step_failed (retryable: false) and workflow_failed in one batch, without
 * using the remaining attempts. Any other error is retried until `maxAttempts`.
 * @example
 * charge: async (ctx) => {
 *   if (ctx.data.amount <= 0) throw new NonRetryableError("amount must be positive");
 *   return { step: "ship" };
 * },
 */
export class NonRetryableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "NonRetryableError";
    brandError(this, "NonRetryableError");
  }
}

/** Known by its brand, not its class, in case a bundle holds two copies of the runtime. */
export function isNonRetryableError(error: unknown): boolean {
  return errorKindOf(error) === "NonRetryableError";
}
