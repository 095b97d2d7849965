/**
 * The `ctx` a project's handler gets in the test kit: `waitUntil` work is
 * kept, and `settled()` waits for all of it (settled, not rejected: a
 * background task that fails does not fail the answer), so a test sees what
 * that work did before it looks, as a deployed worker's would finish.
 */
export function testExecutionContext(): { ctx: ExecutionContext; settled(): Promise<unknown> } {
  const pending: Promise<unknown>[] = [];
  const ctx = {
    waitUntil: (promise: Promise<unknown>) => void pending.push(promise),
    passThroughOnException: () => {},
    props: {},
  } as unknown as ExecutionContext;
  return { ctx, settled: () => Promise.allSettled(pending) };
}
