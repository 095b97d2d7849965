import { PlatformError } from "../../core/errors.ts";

/**
 * A project's sign-in settings, from the `auth` entry of its metadata
 * (`auth.allow({ domains, sessionMaxAge })`), stored in `project_auth` for
 * the login worker. Absent `auth`: the project does not use sign-in and its
 * row is removed.
 */
export interface ProjectAuthSettings {
  /** Lower-cased; `null` = every account may sign in. */
  domains: string[] | null;
  sessionMaxAge: number;
}

export const DEFAULT_SESSION_MAX_AGE = 30 * 24 * 60 * 60;
/** Browsers cap cookie lifetimes at 400 days. */
const MAX_SESSION_MAX_AGE = 400 * 24 * 60 * 60;
const MAX_DOMAINS = 100;
const LABEL = "[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?";
const DOMAIN = new RegExp(`^${LABEL}(?:\\.${LABEL})+$`);

export function validateMetadataAuth(value: unknown): ProjectAuthSettings | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new PlatformError("invalid_input", "auth must be an object { domains?, sessionMaxAge? }.");
  }
  const { domains, sessionMaxAge } = value as Record<string, unknown>;
  let list: string[] | null = null;
  if (domains !== undefined && domains !== null) {
    if (!Array.isArray(domains) || domains.length > MAX_DOMAINS) {
      throw new PlatformError("invalid_input", `auth.domains must be an array of at most ${MAX_DOMAINS} email domains.`);
    }
    if (domains.length === 0) {
      throw new PlatformError("invalid_input", "auth.domains is empty, so nobody could sign in; list at least one domain, or leave it out to allow every account.");
    }
    list = domains.map((d) => {
      const domain = typeof d === "string" ? d.trim().toLowerCase() : "";
      if (domain.length > 253 || !DOMAIN.test(domain)) {
        throw new PlatformError("invalid_input", `auth.domains: "${String(d).slice(0, 100)}" is not an email domain such as "example.com".`);
      }
      return domain;
    });
    list = [...new Set(list)];
  }
  let maxAge = DEFAULT_SESSION_MAX_AGE;
  if (sessionMaxAge !== undefined && sessionMaxAge !== null) {
    if (typeof sessionMaxAge !== "number" || !Number.isInteger(sessionMaxAge) || sessionMaxAge < 1 || sessionMaxAge > MAX_SESSION_MAX_AGE) {
      throw new PlatformError("invalid_input", `auth.sessionMaxAge must be a whole number of seconds from 1 to ${MAX_SESSION_MAX_AGE} (400 days).`);
    }
    maxAge = sessionMaxAge;
  }
  return { domains: list, sessionMaxAge: maxAge };
}

/** Statements that replace (or, with `null`, remove) a project's sign-in settings; batch them with the rest. */
export function replaceProjectAuthStatements(db: D1Database, projectId: number, settings: ProjectAuthSettings | null): D1PreparedStatement[] {
  const remove = db.prepare("DELETE FROM project_auth WHERE project_id = ?").bind(projectId);
  if (!settings) return [remove];
  return [
    remove,
    db
      .prepare("INSERT INTO project_auth (project_id, domains, session_max_age, updated_at) VALUES (?, ?, ?, ?)")
      .bind(projectId, settings.domains === null ? null : JSON.stringify(settings.domains), settings.sessionMaxAge, Date.now()),
  ];
}
