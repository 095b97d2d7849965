import { PlatformError } from "#src/core/errors.ts";

/** The PlatformError a promise rejects with; anything else (a fulfilment, another error) fails the test. */
export async function rejection(promise: Promise<unknown>): Promise<PlatformError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof PlatformError) return error;
    throw error;
  }
  throw new Error("expected a rejection");
}
