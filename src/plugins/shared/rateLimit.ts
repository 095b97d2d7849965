import { PlatformError } from "../../core/errors.ts";
import type { RateTake } from "../../objects/RateLimiter.ts";
import type { ProjectRow } from "../../workers/db/projectsTable.ts";
import type { PluginEnv } from "./pluginEnv.ts";

/**
 * The spec's proxy limits: every proxy route takes from `actions`; an email
 * send also from `email`. `exemptWhenPrivate`: the spec exempts private
 * deployments from the proxy rate only, never from the email send rate.
 * `chatServerBot` (beyond the spec): a project's share of the shared
 * chat-server bot, one take per bot action (plugins/chatserver/botBudget.ts),
 * private projects included.
 */
export const RATE_BUCKETS = {
  actions: { limit: 3, windowMS: 60_000, what: "plugin actions", exemptWhenPrivate: true },
  email: { limit: 3, windowMS: 60_000, what: "email sends", exemptWhenPrivate: false },
  chatServerBot: { limit: 5, windowMS: 1_000, what: "chat-server bot calls", exemptWhenPrivate: false },
} as const;

export type RateBucket = keyof typeof RATE_BUCKETS;

const perWindow = (windowMS: number) => (windowMS === 1_000 ? "second" : `${windowMS / 1000} seconds`);

/**
 * Takes one from each bucket of the project's `RateLimiter` (all or none),
 * skipping the buckets a private project is exempt from, at `now` (the
 * actor's own clock when omitted). Throws `rate_limited` (429) with
 * `details.retryAfterSeconds`; `pluginErrorResponse` turns it into `Retry-After`.
 */
export async function takeRateLimit(
  env: Pick<PluginEnv, "RATE_LIMITER">,
  project: Pick<ProjectRow, "id" | "private">,
  requested: readonly RateBucket[],
  now?: number,
): Promise<void> {
  const buckets = requested.filter((bucket) => project.private !== 1 || !RATE_BUCKETS[bucket].exemptWhenPrivate);
  if (buckets.length === 0) return;
  const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`project:${project.id}`));
  const takes: RateTake[] = buckets.map((bucket) => ({
    bucket,
    limit: RATE_BUCKETS[bucket].limit,
    windowMS: RATE_BUCKETS[bucket].windowMS,
  }));
  const decision = await stub.takeAll(takes, now);
  if (decision.allowed) return;
  const bucket = (decision.bucket ?? buckets[0]!) as RateBucket;
  const { limit, windowMS, what } = RATE_BUCKETS[bucket];
  throw new PlatformError(
    "rate_limited",
    `Rate limit reached: a project may make ${limit} ${what} per ${perWindow(windowMS)}. Retry in ${decision.retryAfterSeconds} s.`,
    { retryAfterSeconds: decision.retryAfterSeconds, bucket },
  );
}
