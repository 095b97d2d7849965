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

/** The PlatformError `fn` throws; anything else (a return, another error) fails the test. */
export function thrown(fn: () => unknown): PlatformError {
  try {
    fn();
  } catch (error) {
    if (error instanceof PlatformError) return error;
    throw error;
  }
  throw new Error("expected a PlatformError to be thrown");
}

/** The code of the PlatformError `fn` throws, undefined when it returns, and a telling string for another error. */
export function thrownCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return error instanceof PlatformError ? error.code : `not a PlatformError: ${String(error)}`;
  }
  return undefined;
}
