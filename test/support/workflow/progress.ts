/**
 * How long a test polls for what runs on its own: a backend's timers (its loop, a backoff), an
 * actor's alarm, the run index hearing of a run. They run on the real event loop, which a loaded
 * 2-core machine delays by seconds, so the bound is generous; the poll ends as soon as the state
 * is there. Files that poll with it give their tests PROGRESS_TEST_TIMEOUT_MS (vi.setConfig), so
 * the poll, with its last failed expectation, runs out before the test does.
 */
export const PROGRESS = { timeout: 10_000, interval: 10 } as const;
export const PROGRESS_TEST_TIMEOUT_MS = 30_000;
