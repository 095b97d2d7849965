import { PlatformError } from "../../core/errors.ts";
import type { ApiEnv } from "./env.ts";

/** How many projects one account may own unless the API worker's `MAX_PROJECTS_PER_ACCOUNT` says otherwise. */
export const DEFAULT_MAX_PROJECTS_PER_ACCOUNT = 20;

/**
 * The cap on projects per account: the API worker's `MAX_PROJECTS_PER_ACCOUNT`
 * var (a whole number from 1), else 20. Every per-project quota (email,
 * plugin actions, workflow executions) is counted per account as well, and
 * the cap keeps an account from spreading its work over unlimited projects.
 * A var that is not such a number is a misconfiguration, said as such.
 */
export function maxProjectsPerAccount(env: Pick<ApiEnv, "MAX_PROJECTS_PER_ACCOUNT">): number {
  const text = env.MAX_PROJECTS_PER_ACCOUNT;
  if (text === undefined || text === "") return DEFAULT_MAX_PROJECTS_PER_ACCOUNT;
  const cap = Number(text);
  if (!/^\d{1,9}$/.test(String(text).trim()) || !Number.isSafeInteger(cap) || cap < 1) {
    throw new PlatformError(
      "internal",
      `This platform's MAX_PROJECTS_PER_ACCOUNT is "${text}", not a whole number from 1; its operator must fix the API worker's var.`,
    );
  }
  return cap;
}

/** The refusal of a project past the cap: what the account has, what it may have, and that nothing was created. */
export function projectCapError(slug: string, cap: number, owned: number): PlatformError {
  return new PlatformError(
    "quota_exceeded",
    `Your account already has ${owned} projects, and an account may have at most ${cap} on this platform (MAX_PROJECTS_PER_ACCOUNT), so "${slug}" was not created. Push to one of your projects instead (platform push --slug <slug>), or ask the platform's operator to raise the limit.`,
    { limit: cap, projects: owned },
  );
}
