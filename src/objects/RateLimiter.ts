// The design card's path for the per-project rate counter; the class lives with the platform's actors.
export { RateLimiter, type RateTake } from "../platform/actors/RateLimiter.ts";
