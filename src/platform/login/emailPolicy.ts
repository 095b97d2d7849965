/**
 * Which verified email addresses may sign in to a project. The domain rule
 * is enforced here, on the verified `email` claim, whatever the provider's
 * `hd` hint says: the part after the single "@", lower-cased, must equal one
 * of the project's `domains` exactly (no suffix matching, so neither
 * `a@example.com.evil.io` nor `a@sub.example.com` passes for `example.com`).
 */
export interface ParsedEmail {
  /** The address with its domain lower-cased. */
  email: string;
  local: string;
  domain: string;
}

const LABEL = "[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?";
const DOMAIN = new RegExp(`^${LABEL}(?:\\.${LABEL})+$`);

/** A plain `local@domain` address, or `null`: quoted local parts, two "@", whitespace and control characters are refused. */
export function parseEmail(value: unknown): ParsedEmail | null {
  if (typeof value !== "string" || value.length > 254) return null;
  if (/[\s"\\<>()[\],;:\u0000-\u001f\u007f]/.test(value)) return null;
  const at = value.indexOf("@");
  if (at <= 0 || at !== value.lastIndexOf("@") || at > 64) return null;
  const local = value.slice(0, at);
  const domain = value.slice(at + 1).toLowerCase();
  if (!DOMAIN.test(domain)) return null;
  return { email: `${local}@${domain}`, local, domain };
}

/** `null` domains: every account may sign in. */
export function domainAllowed(domain: string, domains: readonly string[] | null): boolean {
  if (domains === null) return true;
  const wanted = domain.toLowerCase();
  return domains.some((d) => d.toLowerCase() === wanted);
}
