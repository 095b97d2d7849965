import { PlatformError } from "../../core/errors.ts";
import type { ProjectRow } from "../../workers/db/projectsTable.ts";
import { takeProjectRates } from "../../workers/quota/takeProjectRates.ts";
import type { PluginEnv } from "./pluginEnv.ts";

/**
 * The proxy's rate limits: every proxy route takes from `actions`; an email
 * send also from `email`. `exemptWhenPrivate`: private deployments are
 * exempt from the proxy rate only, never from the email send rate.
 * `chatServerBot`: a project's share of the shared
 * chat-server bot, one take per bot action (plugins/chatserver/botBudget.ts),
 * private projects included. An email send also takes from the account's
 * `email` limit (objects/accountRateLimits.ts: 10 per 60 s across all the
 * account's projects), so more projects do not mean more email.
 */
export const RATE_BUCKETS = {
  actions: { limit: 3, windowMS: 60_000, what: "plugin actions", exemptWhenPrivate: true },
  email: { limit: 3, windowMS: 60_000, what: "email sends", exemptWhenPrivate: false },
  chatServerBot: { limit: 5, windowMS: 1_000, what: "chat-server bot calls", exemptWhenPrivate: false },
} as const;

export type RateBucket = keyof typeof RATE_BUCKETS;

const perWindow = (windowMS: number) => (windowMS === 1_000 ? "second" : `${windowMS / 1000} seconds`);

/** Whether this isolate has said once that a local project went past the deployed public proxy rate. */
let notedDeployedRefusal = false;

/**
 * Under `platform dev`: counts the call against the public proxy rate it is exempt from, and the first
 * time a deployed public project would have been refused, logs one line saying so (the dev terminal shows it).
 */
async function noteDeployedRefusal(
  env: Pick<PluginEnv, "RATE_LIMITER">,
  project: Pick<ProjectRow, "id" | "owner_id">,
  now?: number,
): Promise<void> {
  const { limit, windowMS, what } = RATE_BUCKETS.actions;
  const refused = await takeProjectRates(env.RATE_LIMITER, project, {
    rates: [{ bucket: "actions", limit, windowMS }],
    account: null,
    projectRefusal: () => new PlatformError("rate_limited", what),
    now,
  });
  if (!refused || notedDeployedRefusal) return;
  notedDeployedRefusal = true;
  console.log(
    `Note: deployed as a public project this would be refused (429 rate_limited: ${limit} ${what} per ${perWindow(windowMS)}). Local projects run as private deployments, which have no proxy rate; \`platform dev --public\` applies the public limits.`,
  );
}

/**
 * Takes one from each of the project's buckets, skipping those a private
 * project is exempt from, and for an email send from its account's `email`
 * limit too: all in the account's `RateLimiter`, all or none, at `now` (the
 * actor's own clock when omitted). Throws `rate_limited` (429) with
 * `details.retryAfterSeconds` and `details.scope` ("project" or "account");
 * `pluginErrorResponse` turns it into `Retry-After`.
 *
 * Under `platform dev` every local project is a private deployment
 * (`LOCAL_PROJECTS_PRIVATE`): what it would be refused deployed as a public
 * project is still counted, and the first such call logs one line saying so.
 */
export async function takeRateLimit(
  env: Pick<PluginEnv, "RATE_LIMITER" | "LOCAL_PROJECTS_PRIVATE">,
  project: Pick<ProjectRow, "id" | "private" | "owner_id">,
  requested: readonly RateBucket[],
  now?: number,
): Promise<void> {
  const localPrivate = env.LOCAL_PROJECTS_PRIVATE === "1" && project.private !== 1;
  const isPrivate = project.private === 1 || localPrivate;
  const buckets = requested.filter((bucket) => !isPrivate || !RATE_BUCKETS[bucket].exemptWhenPrivate);
  if (localPrivate && buckets.length < requested.length) await noteDeployedRefusal(env, project, now);
  if (buckets.length === 0) return;
  const refusal = await takeProjectRates(env.RATE_LIMITER, project, {
    rates: buckets.map((bucket) => ({ bucket, ...RATE_BUCKETS[bucket] })),
    account: buckets.includes("email") ? "email" : null,
    projectRefusal: ({ bucket, limit, windowMS, what }, retryAfterSeconds) =>
      new PlatformError(
        "rate_limited",
        `Rate limit reached: a project may make ${limit} ${what} per ${perWindow(windowMS)}. Retry in ${retryAfterSeconds} s.`,
        { retryAfterSeconds, bucket, scope: "project" },
      ),
    now,
  });
  if (refusal) throw refusal.error;
}
