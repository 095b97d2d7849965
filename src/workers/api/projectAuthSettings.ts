import { DEFAULT_SESSION_SECONDS, MAX_SESSION_SECONDS } from "../../contracts/signInSessions.ts";
import { normalizeDomain } from "../../core/email.ts";
import { PlatformError } from "../../core/errors.ts";
import type { ProjectAuthSettings } from "../db/projectAuthTable.ts";

/*
 * A project's sign-in settings come from the `auth` entry of its metadata
 * (`auth.allow({ domains, sessionMaxAge })`) and are stored in `project_auth`
 * for the login worker. Absent `auth`: the project does not use sign-in and
 * its row is removed.
 */

const MAX_DOMAINS = 100;

export function validateMetadataAuth(value: unknown): ProjectAuthSettings | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new PlatformError("invalid_input", "auth must be an object { domains?, sessionMaxAge? }.");
  }
  const { domains, sessionMaxAge } = value as Record<string, unknown>;
  let list: string[] | null = null;
  if (domains !== undefined && domains !== null) {
    if (!Array.isArray(domains) || domains.length > MAX_DOMAINS) {
      throw new PlatformError(
        "invalid_input",
        `auth.domains must be an array of at most ${MAX_DOMAINS} email domains.`,
      );
    }
    if (domains.length === 0) {
      throw new PlatformError(
        "invalid_input",
        "auth.domains is empty, so nobody could sign in; list at least one domain, or leave it out to allow every account.",
      );
    }
    list = domains.map((d) => {
      const domain = typeof d === "string" ? normalizeDomain(d.trim()) : null;
      if (!domain) {
        throw new PlatformError(
          "invalid_input",
          `auth.domains: "${String(d).slice(0, 100)}" is not an email domain such as "example.com".`,
        );
      }
      return domain;
    });
    list = [...new Set(list)];
  }
  let maxAge = DEFAULT_SESSION_SECONDS;
  if (sessionMaxAge !== undefined && sessionMaxAge !== null) {
    if (
      typeof sessionMaxAge !== "number" ||
      !Number.isInteger(sessionMaxAge) ||
      sessionMaxAge < 1 ||
      sessionMaxAge > MAX_SESSION_SECONDS
    ) {
      throw new PlatformError(
        "invalid_input",
        `auth.sessionMaxAge must be a whole number of seconds from 1 to ${MAX_SESSION_SECONDS} (400 days).`,
      );
    }
    maxAge = sessionMaxAge;
  }
  return { domains: list, sessionMaxAge: maxAge };
}
