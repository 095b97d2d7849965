import { PlatformError } from "../../core/errors.ts";
import type { ApiEnv } from "./env.ts";

/** How many live runs one account may have unless the API worker's `MAX_LIVE_RUNS_PER_ACCOUNT` says otherwise. */
export const DEFAULT_MAX_LIVE_RUNS_PER_ACCOUNT = 10_000;

/**
 * The account's live-run budget: the API worker's `MAX_LIVE_RUNS_PER_ACCOUNT`
 * var (a whole number from 1), else 10,000. Read here only. A var that is
 * not such a number is a misconfiguration, said as such.
 */
export function maxLiveRunsPerAccount(env: Pick<ApiEnv, "MAX_LIVE_RUNS_PER_ACCOUNT">): number {
  const text = env.MAX_LIVE_RUNS_PER_ACCOUNT;
  if (text === undefined || text === "") return DEFAULT_MAX_LIVE_RUNS_PER_ACCOUNT;
  const cap = Number(text);
  if (!/^\d{1,9}$/.test(String(text).trim()) || !Number.isSafeInteger(cap) || cap < 1) {
    throw new PlatformError(
      "internal",
      `This platform's MAX_LIVE_RUNS_PER_ACCOUNT is "${text}", not a whole number from 1; its operator must fix the API worker's var.`,
    );
  }
  return cap;
}

/** The refusal of runs that would pass the budget: the cap, what is live, and that none of them started. */
export function liveRunBudgetError(cap: number, live: number, asked: number): PlatformError {
  return new PlatformError(
    "rate_limited",
    `Account live-run budget of ${cap} runs reached: the account that owns this project has ${live} runs live (started and not ended) across all its projects, and ${asked === 1 ? "this run" : `these ${asked} runs`} would pass it, so none was started. Start them once runs have ended, or ask the platform's operator to raise MAX_LIVE_RUNS_PER_ACCOUNT.`,
    { scope: "account", limit: cap, live, asked },
  );
}
