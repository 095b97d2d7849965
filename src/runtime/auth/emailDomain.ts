/**
 * The domain rule of sign-in: an address may sign in when `domains` is not
 * set, or when the part after its single `@`, lower-cased, equals one of the
 * listed domains exactly. `a@EXAMPLE.COM` matches `example.com`;
 * `a@sub.example.com` and `a@example.com.evil.io` do not. Addresses the rule
 * cannot read unambiguously are refused outright: quoted local parts, a
 * second `@`, whitespace or control characters, a domain without a dot.
 */

const LABEL = "[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?";
const DOMAIN = new RegExp(`^(?=.{4,253}$)${LABEL}(?:\\.${LABEL})+$`);
// RFC 5322 atext and dots; no quotes, spaces, "@", brackets, commas or backslashes.
const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;

/** `"Example.COM"` → `"example.com"`; `null` when it is not a bare ASCII domain with a dot. */
export function normalizeDomain(input: string): string | null {
  const domain = input.toLowerCase();
  return DOMAIN.test(domain) ? domain : null;
}

export interface ParsedEmail {
  /** The address with its domain lower-cased (the local part is kept as typed). */
  email: string;
  domain: string;
}

export function parseEmail(input: unknown): ParsedEmail | null {
  if (typeof input !== "string" || input.length > 254) return null;
  const parts = input.split("@");
  if (parts.length !== 2) return null;
  const [local, rawDomain] = parts as [string, string];
  if (local.length === 0 || local.length > 64 || !LOCAL_PART.test(local)) return null;
  const domain = normalizeDomain(rawDomain);
  if (!domain) return null;
  return { email: `${local}@${domain}`, domain };
}

export type EmailCheck = { ok: true; email: string } | { ok: false; reason: "malformed" | "domain_not_allowed"; domain?: string };

/** Applies the rule: the same check for the dummy form, the callback and every session read. */
export function checkEmail(input: unknown, domains: readonly string[] | null): EmailCheck {
  const parsed = parseEmail(input);
  if (!parsed) return { ok: false, reason: "malformed" };
  if (domains && !domains.includes(parsed.domain)) return { ok: false, reason: "domain_not_allowed", domain: parsed.domain };
  return { ok: true, email: parsed.email };
}
