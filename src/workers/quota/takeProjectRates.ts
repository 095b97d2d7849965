import type { PlatformError } from "../../core/errors.ts";
import {
  type AccountLimit,
  accountLimitError,
  accountRateLimiter,
  accountTake,
  projectTake,
  type QuotaOwner,
  refusedAccountLimit,
} from "../../objects/accountRateLimits.ts";
import type { RateLimiter } from "../../objects/RateLimiter.ts";

/** One of a project's own limits: at most `limit` takes from `bucket` in any `windowMS`. */
export interface ProjectRate {
  bucket: string;
  limit: number;
  windowMS: number;
}

/** A refused take: the 429 to answer and when to retry. */
export interface RateRefusal {
  error: PlatformError;
  retryAfterSeconds: number;
}

/** The project's rates to take one from, the account's limit to take too (or null), how a project refusal reads, and when. */
export interface RatesToTake<Rate extends ProjectRate> {
  rates: readonly Rate[];
  account: AccountLimit | null;
  projectRefusal: (rate: Rate, retryAfterSeconds: number) => PlatformError;
  now?: number;
}

/**
 * Takes one from each of the project's `rates` and, when `account` names one,
 * from its account's limit too (objects/accountRateLimits.ts): all in the
 * account's `RateLimiter`, all or none, at `now` (the actor's own clock when
 * omitted). Answers null when taken; a refusal at the account's limit is its
 * `accountLimitError`, one at a project's rate is `projectRefusal`'s error
 * (the caller names what it limits).
 */
export async function takeProjectRates<Rate extends ProjectRate>(
  limiters: DurableObjectNamespace<RateLimiter>,
  project: QuotaOwner,
  { rates, account, projectRefusal, now }: RatesToTake<Rate>,
): Promise<RateRefusal | null> {
  const takes = rates.map((rate) => projectTake(project, rate.bucket, rate.limit, rate.windowMS));
  if (account) takes.push(accountTake(account));
  const decision = await accountRateLimiter(limiters, project).takeAll(takes, now);
  if (decision.allowed) return null;
  const { retryAfterSeconds } = decision;
  const refusedAccount = refusedAccountLimit(decision.bucket);
  if (refusedAccount) return { error: accountLimitError(refusedAccount, retryAfterSeconds), retryAfterSeconds };
  const refused = rates[takes.findIndex((take) => take.bucket === decision.bucket)] ?? rates[0]!;
  return { error: projectRefusal(refused, retryAfterSeconds), retryAfterSeconds };
}
