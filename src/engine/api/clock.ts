/**
 * Where the engine and the hosts that drive it read the time (epoch ms).
 * Injected, never read from `Date.now` directly, so tests can move it.
 */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();
