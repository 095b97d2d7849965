import { DEFAULT_SESSION_SECONDS, MAX_SESSION_SECONDS } from "../../contracts/signInSessions.ts";
import { PlatformError } from "../../core/errors.ts";
import { normalizeDomain } from "../../core/email.ts";

/**
 * Options of `auth.allow()`.
 * @example
 * const options: AuthOptions = { domains: ["example.com"], sessionMaxAge: 8 * 3600 };
 * auth.allow(options);
 */
export interface AuthOptions {
  /** Email domains allowed to sign in (bare domains, e.g. `"example.com"`); omit to allow every account. */
  domains?: string[];
  /** Session lifetime in seconds (default 2,592,000 = 30 days, at most 400 days). */
  sessionMaxAge?: number;
}

/** What sign-in enforces, after validation. `domains: null` means every account may sign in. */
export interface AuthSettings {
  domains: readonly string[] | null;
  sessionMaxAge: number;
}

const KNOWN_OPTIONS = new Set(["domains", "sessionMaxAge"]);

let settings: AuthSettings = { domains: null, sessionMaxAge: DEFAULT_SESSION_SECONDS };

/** Validates `auth.allow()` options; every mistake is an `invalid_input` PlatformError saying what to write instead. */
export function validateAuthOptions(options: unknown): AuthSettings {
  if (options === undefined || options === null) return { domains: null, sessionMaxAge: DEFAULT_SESSION_SECONDS };
  if (typeof options !== "object" || Array.isArray(options)) {
    throw new PlatformError(
      "invalid_input",
      'auth.allow() takes an options object: auth.allow({ domains: ["example.com"], sessionMaxAge: 86400 }).',
    );
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(key)) {
      throw new PlatformError(
        "invalid_input",
        `auth.allow() has no option "${key}"; the options are domains and sessionMaxAge.`,
      );
    }
  }
  const { domains, sessionMaxAge } = options as { domains?: unknown; sessionMaxAge?: unknown };

  let maxAge = DEFAULT_SESSION_SECONDS;
  if (sessionMaxAge !== undefined) {
    if (
      typeof sessionMaxAge !== "number" ||
      !Number.isInteger(sessionMaxAge) ||
      sessionMaxAge <= 0 ||
      sessionMaxAge > MAX_SESSION_SECONDS
    ) {
      throw new PlatformError(
        "invalid_input",
        `auth.allow(): sessionMaxAge must be a whole number of seconds from 1 to ${MAX_SESSION_SECONDS} (400 days); got ${describe(sessionMaxAge)}.`,
      );
    }
    maxAge = sessionMaxAge;
  }

  let list: string[] | null = null;
  if (domains !== undefined) {
    if (!Array.isArray(domains)) {
      throw new PlatformError(
        "invalid_input",
        `auth.allow(): domains must be an array of domains, e.g. ["example.com"]; got ${describe(domains)}.`,
      );
    }
    if (domains.length === 0) {
      throw new PlatformError(
        "invalid_input",
        "auth.allow(): domains is empty, so nobody could sign in; list at least one domain, or leave domains out to allow every account.",
      );
    }
    list = [];
    for (const entry of domains) {
      const domain = typeof entry === "string" ? normalizeDomain(entry) : null;
      if (!domain) {
        throw new PlatformError(
          "invalid_input",
          `auth.allow(): ${describe(entry)} is not a bare domain; write domains like "example.com" (no "@", scheme, path, port or wildcard; internationalised domains in their xn-- form).`,
        );
      }
      if (!list.includes(domain)) list.push(domain);
    }
  }
  return { domains: list ? Object.freeze(list) : null, sessionMaxAge: maxAge };
}

function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return "an array";
  return value === null ? "null" : typeof value === "object" ? "an object" : String(value);
}

/** `auth.allow(options)`: the last call wins (call it once, at top level). */
export function setAuthSettings(next: AuthSettings): void {
  settings = next;
}

export function authSettings(): AuthSettings {
  return settings;
}
